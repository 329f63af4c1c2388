// Asynchronous copies on CUDA (sm_80+): stores under a loop annotated async_copy (set by
// inject_software_pipeline, lower/passes.h) that copy global memory into shared memory
// become cp.async (16 bytes .cg, 4 or 8 bytes .ca; 4-byte copies behind a guard, zero where
// it fails, with cp.async's zero-fill), and async_commit_group /
// async_wait_group become their PTX. A store that does not qualify (a 2-byte scalar, an
// unaligned vector) stays a plain store: it lands at once, which the pipeline's barriers
// cover as well. Not the vector loop itself (cuda_vector_loop.cc decides the widths).
#include "cuda_emitter.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"

namespace dragon::codegen {

bool CudaEmitter::is_async_copy_loop(const ir::ForNode* op) { return op->annotations.count(lower::kAsyncCopyAnnotation) > 0; }

std::optional<lower::AsyncCopySource> CudaEmitter::async_copy_of(const ir::BufferStoreNode* store) const {
  if (async_depth_ == 0) return std::nullopt;
  return lower::async_copy_source(store);
}

void CudaEmitter::print_async_copy(const std::string& dst, const std::string& src, int64_t bytes,
                                   const std::string& guard) {
  uses_async_copies_ = true;
  if (guard.empty()) {
    line(fmt::format("dragon_cp_async_{}({}, {});", bytes, dst, src));
  } else {
    line(fmt::format("dragon_cp_async_{}_zfill({}, {}, {});", bytes, dst, src, guard));
  }
}

void CudaEmitter::visit_(const ir::BufferStoreNode* op) {
  std::optional<lower::AsyncCopySource> copy = async_copy_of(op);
  if (!copy || op->buffer->dtype.bytes() != 4 || op->indices.size() != 1 || copy->load->indices.size() != 1) {
    CPrinter::visit_(op);
    return;
  }
  const ir::BufferLoadNode* load = copy->load;
  const std::string dst = fmt::format("{} + {}", buffer_name(op->buffer), index_text(op->buffer, op->indices));
  const std::string src = fmt::format("{} + {}", buffer_name(load->buffer), index_text(load->buffer, load->indices));
  if (!copy->guard.defined()) {
    print_async_copy(dst, src, 4);
    return;
  }
  // Where the guard fails the index may lie outside the source (a padded gather's), so the
  // address passed is the buffer's own: cp.async reads nothing there and writes zeros. The
  // guard is evaluated once, into a local.
  line("{");
  ++indent_;
  line(fmt::format("const bool dragon_in_bounds = {};", print_expr(copy->guard)));
  print_async_copy(dst, fmt::format("dragon_in_bounds ? ({}) : {}", src, buffer_name(load->buffer)), 4,
                   "dragon_in_bounds");
  --indent_;
  line("}");
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
DRAGON_INLINE void dragon_cp_async_4_zfill(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(dragon_shared_address(dst)), "l"(src),
               "r"(valid ? 4 : 0) : "memory");
}
)";
}

}  // namespace dragon::codegen
