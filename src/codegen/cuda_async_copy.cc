// Asynchronous copies on CUDA (sm_80+): stores under a loop annotated async_copy (set by
// inject_software_pipeline, lower/passes.h) that copy global memory into shared memory
// become cp.async (16 bytes .cg, 4 or 8 bytes .ca), and async_commit_group /
// async_wait_group become their PTX. A store that does not qualify (a 2-byte scalar, an
// unaligned vector) stays a plain store: it lands at once, which the pipeline's barriers
// cover as well. Not the vector loop itself (cuda_vector_loop.cc decides the widths).
#include "cuda_emitter.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"

namespace dragon::codegen {

bool CudaEmitter::is_async_copy_loop(const ir::ForNode* op) { return op->annotations.count(lower::kAsyncCopyAnnotation) > 0; }

const ir::BufferLoadNode* CudaEmitter::async_copy_source(const ir::BufferStoreNode* store) const {
  if (async_depth_ == 0 || (store->buffer->scope != "shared" && store->buffer->scope != "shared.dyn")) return nullptr;
  const auto* load = store->value.as<ir::BufferLoadNode>();
  if (load == nullptr || load->buffer->scope != "global" || load->buffer->dtype != store->buffer->dtype) return nullptr;
  return load;
}

void CudaEmitter::print_async_copy(const std::string& dst, const std::string& src, int64_t bytes) {
  uses_async_copies_ = true;
  line(fmt::format("dragon_cp_async_{}({}, {});", bytes, dst, src));
}

void CudaEmitter::visit_(const ir::BufferStoreNode* op) {
  const ir::BufferLoadNode* load = async_copy_source(op);
  if (load == nullptr || op->buffer->dtype.bytes() != 4 || op->indices.size() != 1 || load->indices.size() != 1) {
    CPrinter::visit_(op);
    return;
  }
  print_async_copy(fmt::format("{} + {}", buffer_name(op->buffer), flat_index(op->buffer, op->indices)),
                   fmt::format("{} + {}", buffer_name(load->buffer), flat_index(load->buffer, load->indices)), 4);
}

void CudaEmitter::print_async_effect(const ir::CallNode* call) {
  uses_async_copies_ = true;
  if (call->op == ir::Intrinsic::AsyncCommitGroup) {
    line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");");
    return;
  }
  DRAGON_CHECK(call->op == ir::Intrinsic::AsyncWaitGroup, "not an async copy intrinsic");
  line(fmt::format("asm volatile(\"cp.async.wait_group {};\\n\" ::: \"memory\");", *ir::as_const_int(call->args[0])));
}

std::string_view async_copy_prelude() {
  // The "memory" clobbers keep the compiler from moving shared-memory accesses across the
  // copies and waits it cannot see into.
  return R"(DRAGON_INLINE void dragon_cp_async_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dragon_shared_address(dst)), "l"(src) : "memory");
}
DRAGON_INLINE void dragon_cp_async_8(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" :: "r"(dragon_shared_address(dst)), "l"(src) : "memory");
}
DRAGON_INLINE void dragon_cp_async_4(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(dragon_shared_address(dst)), "l"(src) : "memory");
}
)";
}

}  // namespace dragon::codegen
