// verify_gpu_code (passes.h): MetaSchedule's VerifyGPUCode on lowered (or block) IR, per
// kernel: threads per block, blocks per grid dimension, shared memory per block, virtual
// threads, vector width.
// Throws UserError naming the limit, the value and the kernel. Changes nothing.
#include <algorithm>
#include <map>
#include <string>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

// Extents must be constants to be checked against a limit; a symbolic one is a user error.
int64_t constant_extent(const ir::ForNode* loop, const std::string& kernel) {
  std::optional<int64_t> extent = ir::as_const_int(loop->extent);
  if (!extent) {
    throw UserError(fmt::format("{}: loop '{}' bound to {} has a non-constant extent", kernel, loop->loop_var.name(),
                                loop->thread_tag));
  }
  return *extent;
}

class KernelMeasure : public ir::StmtExprVisitor {
 public:
  explicit KernelMeasure(std::string kernel) : kernel_(std::move(kernel)) {}

  std::map<std::string, int64_t> launch_extent;  // threadIdx.* and blockIdx.* tag -> largest extent
  int64_t shared_bytes = 0;
  int64_t max_vthreads = 1;  // largest product of virtual-thread extents on one path
  // The widest vector access: bytes and where.
  int64_t vector_bytes = 0;
  std::string vector_site;

 protected:
  using ir::StmtExprVisitor::visit_;

  void visit_(const ir::ForNode* op) override {
    int64_t vthread_factor = 1;
    if (op->for_kind == ir::ForKind::kThreadBinding) {
      int64_t extent = constant_extent(op, kernel_);
      if (gpu::is_vthread_tag(op->thread_tag)) {
        vthread_factor = extent;
      } else {
        int64_t& e = launch_extent[op->thread_tag];
        e = std::max(e, extent);
      }
    } else if (op->annotations.count(kVirtualThreadAnnotation)) {
      // A virtual-thread loop inject_virtual_threads already turned into an unrolled one.
      vthread_factor = ir::as_const_int(op->extent).value_or(1);
    }
    int64_t saved_vector_lanes = vector_lanes_;
    std::string saved_vector_loop = vector_loop_;
    if (op->for_kind == ir::ForKind::kVectorized) {
      vector_lanes_ *= ir::as_const_int(op->extent).value_or(1);
      vector_loop_ = op->loop_var.name();
    }
    vthreads_ *= vthread_factor;
    max_vthreads = std::max(max_vthreads, vthreads_);
    ir::StmtExprVisitor::visit_(op);
    vthreads_ /= vthread_factor;
    vector_lanes_ = saved_vector_lanes;
    vector_loop_ = std::move(saved_vector_loop);
  }

  void visit_(const ir::AllocateNode* op) override {
    count_buffer(op->buffer);
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BlockNode* op) override {
    for (const ir::Buffer& b : op->alloc_buffers) count_buffer(b);
    ir::StmtExprVisitor::visit_(op);
  }

  void visit_(const ir::BufferStoreNode* op) override {
    note_access(op->buffer, op->value.dtype());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferLoadNode* op) override {
    note_access(op->buffer, op->dtype);
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  void count_buffer(const ir::Buffer& b) {
    if (gpu::is_shared_scope(b->scope)) shared_bytes += b->num_elements() * b->dtype.bytes() * b->dtype.lanes();
  }
  // One access moves lanes x element bytes at once; a vectorized loop multiplies the lanes.
  void note_access(const ir::Buffer& buffer, ir::DataType type) {
    int64_t bytes = static_cast<int64_t>(type.lanes()) * type.bytes() * vector_lanes_;
    if (bytes <= vector_bytes || (vector_lanes_ == 1 && type.lanes() == 1)) return;
    vector_bytes = bytes;
    vector_site = vector_loop_.empty() ? fmt::format("an access to '{}' of type {}", buffer->name, ir::to_string(type))
                                       : fmt::format("vectorized loop '{}' accessing '{}' ({})", vector_loop_,
                                                     buffer->name, ir::to_string(type));
  }

  std::string kernel_;
  int64_t vthreads_ = 1;
  int64_t vector_lanes_ = 1;
  std::string vector_loop_;
};

}  // namespace

void verify_gpu_code(const ir::PrimFunc& func, const Target& target) {
  std::vector<ir::Stmt> kernels = gpu::find_kernels(func->body);
  for (size_t k = 0; k < kernels.size(); ++k) {
    std::string kernel = fmt::format("kernel {} of function '{}'", k, func->name);
    KernelMeasure m(kernel);
    m.visit(kernels[k]);
    int64_t threads = 1;
    std::string shape;
    for (const auto& [tag, extent] : m.launch_extent) {
      if (!gpu::is_thread_tag(tag)) continue;
      threads *= extent;
      shape += fmt::format("{}{}={}", shape.empty() ? "" : " x ", tag, extent);
    }
    if (threads > target.max_threads_per_block) {
      throw UserError(fmt::format("{} launches {} threads per block ({}), above the limit max_threads_per_block = {}",
                                  kernel, threads, shape, target.max_threads_per_block));
    }
    for (const auto& [tag, extent] : m.launch_extent) {
      const int64_t limit = target.max_grid_extent(tag);
      if (limit > 0 && extent > limit) {
        throw UserError(fmt::format("{} launches a grid of {} blocks along {}, above the limit of {} (CUDA's grid "
                                    "dimensions)",
                                    kernel, extent, tag, limit));
      }
    }
    if (m.shared_bytes > target.max_shared_memory_per_block) {
      throw UserError(fmt::format("{} uses {} bytes of shared memory per block, above the limit "
                                  "max_shared_memory_per_block = {}",
                                  kernel, m.shared_bytes, target.max_shared_memory_per_block));
    }
    if (m.max_vthreads > target.max_vthreads) {
      throw UserError(fmt::format("{} runs {} virtual threads per thread, above the limit max_vthreads = {}", kernel,
                                  m.max_vthreads, target.max_vthreads));
    }
    if (m.vector_bytes > target.max_vector_bytes) {
      throw UserError(fmt::format("{}: {} moves {} bytes per vector access, above the limit max_vector_bytes = {}",
                                  kernel, m.vector_site, m.vector_bytes, target.max_vector_bytes));
    }
  }
}

}  // namespace dragon::lower
