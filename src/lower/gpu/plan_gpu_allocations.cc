// plan_gpu_allocations (passes.h): every shared and per-thread allocation of a kernel
// moves to the top of the kernel, right under its launch loops, where CUDA declares it;
// clashing names get a suffix. Not a resizing or reuse of memory.
#include <set>
#include <unordered_map>

#include "dragon/ir/functor.h"
#include "dragon/lower/passes.h"
#include "dragon/support/error.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

// Removes the Allocates of shared and per-thread buffers, collecting them in order, and
// renames buffers as `rename` says.
class AllocationHoister : public ir::StmtExprMutator {
 public:
  AllocationHoister(std::string kernel, std::set<std::string> used_names)
      : kernel_(std::move(kernel)), used_names_(std::move(used_names)) {}
  std::vector<ir::Buffer> shared, per_thread;

 protected:
  using ir::StmtExprMutator::visit_;

  ir::Stmt visit_(const ir::AllocateNode* op) override {
    if (op->buffer->scope == "global") {
      throw UserError(fmt::format("{}: buffer '{}' in global scope is allocated inside the kernel; a kernel can only "
                                  "allocate shared or local memory (give it one of those scopes, or compute it in "
                                  "its own kernel)",
                                  kernel_, op->buffer->name));
    }
    ir::Buffer buffer = op->buffer;
    std::string name = buffer->name;
    for (int suffix = 1; used_names_.count(name); ++suffix) name = fmt::format("{}_{}", buffer->name, suffix);
    used_names_.insert(name);
    if (name != buffer->name) {
      ir::Buffer renamed = ir::Buffer::make(name, buffer->dtype, buffer->shape, buffer->scope);
      rename_.emplace(buffer.get(), renamed);
      buffer = renamed;
    }
    (gpu::is_shared_scope(buffer->scope) ? shared : per_thread).push_back(buffer);
    return visit(op->body);
  }

  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr e = ir::StmtExprMutator::visit_(op);
    auto it = rename_.find(op->buffer.get());
    if (it == rename_.end()) return e;
    return ir::BufferLoadNode::make(it->second, e.as<ir::BufferLoadNode>()->indices);
  }

  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    auto it = rename_.find(op->buffer.get());
    if (it == rename_.end()) return s;
    const auto* store = s.as<ir::BufferStoreNode>();
    return ir::BufferStoreNode::make(it->second, store->value, store->indices);
  }

 private:
  std::string kernel_;
  std::set<std::string> used_names_;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> rename_;
};

class KernelRewriter : public ir::StmtMutator {
 public:
  KernelRewriter(const ir::PrimFunc& func) : func_(func) {
    for (const ir::Param& p : func->params) global_names_.insert(p.buffer->name);
  }

  ir::Stmt rewrite(const ir::Stmt& s) {
    return gpu::rewrite_each_kernel(s, global_names_, [&](const ir::Stmt& kernel) {
      return hoist(kernel, fmt::format("kernel {} of function '{}'", kernels_++, func_->name));
    });
  }

 private:
  ir::Stmt hoist(const ir::Stmt& kernel, const std::string& name) {
    const gpu::LaunchNest nest = gpu::peel_launch_nest(kernel);
    const ir::Stmt& body = nest.body;
    if (already_hoisted(body)) return kernel;
    AllocationHoister hoister(name, global_names_);
    ir::Stmt new_body = hoister.visit(body);
    if (new_body.same_as(body)) return kernel;
    std::vector<ir::Buffer> order = hoister.per_thread;
    order.insert(order.begin(), hoister.shared.begin(), hoister.shared.end());
    for (auto it = order.rbegin(); it != order.rend(); ++it) new_body = ir::AllocateNode::make(*it, new_body);
    return nest.with_launch(new_body);
  }

  // Shared allocations, then per-thread ones, at the top, none further down, distinct names.
  static bool already_hoisted(ir::Stmt body) {
    std::set<std::string> names;
    bool per_thread_seen = false;
    while (const auto* alloc = body.as<ir::AllocateNode>()) {
      bool shared = gpu::is_shared_scope(alloc->buffer->scope);
      if ((shared && per_thread_seen) || !names.insert(alloc->buffer->name).second) return false;
      per_thread_seen = per_thread_seen || !shared;
      body = alloc->body;
    }
    struct AllocFinder : ir::StmtVisitor {
      bool found = false;
      using ir::StmtVisitor::visit_;
      void visit_(const ir::AllocateNode*) override { found = true; }
    } finder;
    finder.visit(body);
    return !finder.found;
  }

  const ir::PrimFunc& func_;
  std::set<std::string> global_names_;
  int kernels_ = 0;
};

}  // namespace

ir::PrimFunc plan_gpu_allocations(const ir::PrimFunc& func) {
  DRAGON_CHECK(func.root_block() == nullptr, "plan_gpu_allocations runs on block-free IR (after lower_blocks)");
  ir::Stmt body = KernelRewriter(func).rewrite(func->body);
  return body.same_as(func->body) ? func : func.with_body(body);
}

}  // namespace dragon::lower
