// The barrier-phase model of the kernel form (barrier_simulator.h): thread loops pushed
// below every statement that holds a barrier, per-thread buffers given a copy per thread.
#include "barrier_simulator.h"

#include <unordered_map>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"

namespace dragon::lower::testing {
namespace {

bool is_sync(const ir::Stmt& s) {
  const auto* eval = s.as<ir::EvaluateNode>();
  const auto* call = eval != nullptr ? eval->value.as<ir::CallNode>() : nullptr;
  return call != nullptr && call->op == ir::Intrinsic::SyncThreads;
}

bool contains_sync(const ir::Stmt& s) {
  struct Finder : ir::StmtVisitor {
    bool found = false;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::EvaluateNode* op) override { found = found || is_sync(ir::Stmt(op)); }
  } f;
  f.visit(s);
  return f.found;
}

struct ThreadLoop {
  ir::Var var;
  int64_t extent;
};

// Replaces thread variables and gives per-thread buffers their thread's copy.
class ThreadRewriter : public ir::StmtExprMutator {
 public:
  ThreadRewriter(std::unordered_map<const ir::VarNode*, ir::Expr> vars,
                 const std::unordered_map<const ir::BufferNode*, ir::Buffer>& copies, ir::Expr thread)
      : vars_(std::move(vars)), copies_(copies), thread_(std::move(thread)) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Expr visit_(const ir::VarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? ir::Expr(op) : it->second;
  }
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr e = ir::StmtExprMutator::visit_(op);
    auto it = copies_.find(op->buffer.get());
    if (it == copies_.end()) return e;
    return ir::BufferLoadNode::make(it->second, {slot(op->buffer, e.as<ir::BufferLoadNode>()->indices[0])});
  }
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    auto it = copies_.find(op->buffer.get());
    if (it == copies_.end()) return s;
    const auto* store = s.as<ir::BufferStoreNode>();
    return ir::BufferStoreNode::make(it->second, store->value, {slot(op->buffer, store->indices[0])});
  }

 private:
  ir::Expr slot(const ir::Buffer& b, const ir::Expr& index) const {
    ir::Expr t = thread_.dtype() == index.dtype() ? thread_ : ir::cast(index.dtype(), thread_);
    return t * ir::make_const(index.dtype(), double(b->shape[0])) + index;
  }

  std::unordered_map<const ir::VarNode*, ir::Expr> vars_;
  const std::unordered_map<const ir::BufferNode*, ir::Buffer>& copies_;
  ir::Expr thread_;
};

class KernelSerializer {
 public:
  KernelSerializer(std::vector<ThreadLoop> threads, std::unordered_map<const ir::BufferNode*, ir::Buffer> copies,
                   bool drop)
      : threads_(std::move(threads)), copies_(std::move(copies)), drop_(drop) {}

  ir::Stmt rewrite(const ir::Stmt& s) {
    // Without barriers a thread runs its whole kernel before the next one starts.
    if (drop_ || !contains_sync(s)) return per_thread(s);
    if (is_sync(s)) return s;  // a no-op for the interpreter: the phases are the point
    if (const auto* seq = s.as<ir::SeqStmtNode>()) {
      // Statements between two barriers form one phase: each thread runs all of them
      // before the next thread starts (not statement by statement, which would hide a
      // missing barrier between two of them).
      std::vector<ir::Stmt> out, phase;
      auto flush = [&] {
        if (!phase.empty()) out.push_back(per_thread(ir::SeqStmtNode::make(std::move(phase))));
        phase.clear();
      };
      for (const ir::Stmt& child : seq->seq) {
        if (contains_sync(child)) {
          flush();
          out.push_back(rewrite(child));
        } else {
          phase.push_back(child);
        }
      }
      flush();
      return ir::SeqStmtNode::make(std::move(out));
    }
    if (const auto* loop = s.as<ir::ForNode>()) {
      return ir::ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, rewrite(loop->body),
                               loop->thread_tag, loop->annotations);
    }
    if (const auto* branch = s.as<ir::IfThenElseNode>()) {
      return ir::IfThenElseNode::make(branch->condition, rewrite(branch->then_case),
                                      branch->else_case.defined() ? rewrite(branch->else_case) : ir::Stmt());
    }
    if (const auto* alloc = s.as<ir::AllocateNode>()) return ir::AllocateNode::make(alloc->buffer, rewrite(alloc->body));
    return s;
  }

 private:
  // Every thread runs `s` in turn (fresh loop variables per phase).
  ir::Stmt per_thread(const ir::Stmt& s) {
    std::unordered_map<const ir::VarNode*, ir::Expr> vars;
    std::vector<ir::Var> fresh;
    ir::Expr thread = ir::make_zero(ir::DataType::i32());
    for (const ThreadLoop& t : threads_) {
      fresh.push_back(ir::Var(t.var.name(), t.var.dtype()));
      vars[t.var.get()] = fresh.back();
      thread = thread * ir::make_const(ir::DataType::i32(), double(t.extent)) + fresh.back();
    }
    ir::Stmt body = ThreadRewriter(vars, copies_, thread).visit(s);
    for (size_t i = threads_.size(); i-- > 0;) {
      body = ir::ForNode::make(fresh[i], ir::make_zero(ir::DataType::i32()),
                               ir::make_const(ir::DataType::i32(), double(threads_[i].extent)), ir::ForKind::kSerial,
                               body);
    }
    return body;
  }

  std::vector<ThreadLoop> threads_;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> copies_;
  bool drop_;
};

ir::Stmt serialize_kernel(const ir::Stmt& kernel, bool drop) {
  std::vector<const ir::ForNode*> blocks;
  std::vector<ThreadLoop> threads;
  int64_t thread_count = 1;
  ir::Stmt body = kernel;
  while (const auto* loop = body.as<ir::ForNode>()) {
    if (loop->for_kind != ir::ForKind::kThreadBinding) break;
    if (loop->thread_tag.rfind("threadIdx.", 0) == 0) {
      int64_t extent = *ir::as_const_int(loop->extent);
      threads.push_back({loop->loop_var, extent});
      thread_count *= extent;
    } else {
      blocks.push_back(loop);
    }
    body = loop->body;
  }
  // Kernel-top allocations: shared ones stay, per-thread ones get a copy per thread.
  std::vector<ir::Buffer> allocs;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> copies;
  while (const auto* alloc = body.as<ir::AllocateNode>()) {
    const ir::Buffer& b = alloc->buffer;
    if (b->scope == "shared" || b->scope == "shared.dyn") {
      allocs.push_back(b);
    } else {
      ir::Buffer copy = ir::Buffer::make(b->name, b->dtype, {b->shape[0] * thread_count}, b->scope);
      copies.emplace(b.get(), copy);
      allocs.push_back(copy);
    }
    body = alloc->body;
  }
  ir::Stmt out = KernelSerializer(threads, copies, drop).rewrite(body);
  for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) out = ir::AllocateNode::make(*it, out);
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
    const ir::ForNode* l = *it;
    out = ir::ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, out, l->thread_tag, l->annotations);
  }
  return out;
}

ir::Stmt serialize_top(const ir::Stmt& s, bool drop) {
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    std::vector<ir::Stmt> out;
    for (const ir::Stmt& child : seq->seq) out.push_back(serialize_top(child, drop));
    return ir::SeqStmtNode::make(std::move(out));
  }
  if (const auto* alloc = s.as<ir::AllocateNode>(); alloc != nullptr && alloc->buffer->scope == "global") {
    return ir::AllocateNode::make(alloc->buffer, serialize_top(alloc->body, drop));
  }
  if (s.as<ir::ForNode>() != nullptr && s.as<ir::ForNode>()->for_kind == ir::ForKind::kThreadBinding) {
    return serialize_kernel(s, drop);
  }
  return s;
}

}  // namespace

ir::PrimFunc serialize_between_barriers(const ir::PrimFunc& func, bool drop_barriers) {
  return func.with_body(serialize_top(func->body, drop_barriers));
}

}  // namespace dragon::lower::testing
