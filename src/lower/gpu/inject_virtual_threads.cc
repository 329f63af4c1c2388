// inject_virtual_threads (passes.h): each vthread.* loop is pushed down, as an unrolled
// loop, to the statements that depend on it, so the virtual threads interleave inside one
// thread; buffers they write privately get one copy each. Not a thread binding: the
// kernel's launch is unify_thread_bindings' business.
#include <unordered_map>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "gpu_ir_util.h"

namespace dragon::lower {
namespace {

using BufferSet = std::unordered_set<const ir::BufferNode*>;

// Which buffers allocated under the virtual-thread loop each virtual thread must own: those
// written by a statement that depends on the virtual thread (directly, through an
// enclosing loop or condition, or by reading a buffer it owns), to a fixed point.
class PrivateBufferFinder : public ir::StmtExprVisitor {
 public:
  PrivateBufferFinder(const ir::VarNode* vthread, BufferSet& owned) : vthread_(vthread), owned_(owned) {}
  BufferSet allocated;
  bool grew = false;

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::AllocateNode* op) override {
    allocated.insert(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::ForNode* op) override {
    bool saved = context_;
    context_ = context_ || depends(op->min) || depends(op->extent);
    visit(op->body);
    context_ = saved;
  }
  void visit_(const ir::IfThenElseNode* op) override {
    bool saved = context_;
    context_ = context_ || depends(op->condition);
    visit(op->then_case);
    if (op->else_case.defined()) visit(op->else_case);
    context_ = saved;
  }
  void visit_(const ir::BufferStoreNode* op) override {
    bool dependent = context_ || depends(op->value);
    for (const ir::Expr& index : op->indices) dependent = dependent || depends(index);
    if (dependent && allocated.count(op->buffer.get()) && owned_.insert(op->buffer.get()).second) grew = true;
  }

 private:
  bool depends(const ir::Expr& e) const {
    if (gpu::uses_var(e, [&](const ir::VarNode* v) { return v == vthread_; })) return true;
    struct OwnedLoad : ir::ExprVisitor {
      const BufferSet* owned;
      bool found = false;
      using ir::ExprVisitor::visit_;
      void visit_(const ir::BufferLoadNode* op) override {
        found = found || owned->count(op->buffer.get()) > 0;
        ir::ExprVisitor::visit_(op);
      }
    } finder;
    finder.owned = &owned_;
    finder.visit(e);
    return finder.found;
  }

  const ir::VarNode* vthread_;
  BufferSet& owned_;
  bool context_ = false;
};

// Whether a statement mentions the virtual thread or a buffer the virtual threads own.
class TouchFinder : public ir::StmtExprVisitor {
 public:
  TouchFinder(const ir::VarNode* vthread, const std::unordered_map<const ir::BufferNode*, ir::Buffer>& owned)
      : vthread_(vthread), owned_(owned) {}
  bool touches = false;
  bool rereads_stored = false;  // some store's value loads the buffer it stores to

 protected:
  using ir::StmtExprVisitor::visit_;
  void visit_(const ir::VarNode* op) override { touches = touches || op == vthread_; }
  void visit_(const ir::BufferLoadNode* op) override {
    touches = touches || owned_.count(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::BufferStoreNode* op) override {
    touches = touches || owned_.count(op->buffer.get());
    struct SelfLoad : ir::ExprVisitor {
      const ir::BufferNode* buffer;
      bool found = false;
      using ir::ExprVisitor::visit_;
      void visit_(const ir::BufferLoadNode* load) override {
        found = found || load->buffer.get() == buffer;
        ir::ExprVisitor::visit_(load);
      }
    } self;
    self.buffer = op->buffer.get();
    self.visit(op->value);
    rereads_stored = rereads_stored || self.found;
    ir::StmtExprVisitor::visit_(op);
  }
  void visit_(const ir::AllocateNode* op) override {
    touches = touches || owned_.count(op->buffer.get());
    ir::StmtExprVisitor::visit_(op);
  }

 private:
  const ir::VarNode* vthread_;
  const std::unordered_map<const ir::BufferNode*, ir::Buffer>& owned_;
};

// Accesses to owned buffers get the virtual thread's copy: b[i] -> b'[v * size + i] for
// one-dimensional buffers, b'[v, i...] otherwise; the virtual thread becomes `v`.
class CopySelector : public ir::StmtExprMutator {
 public:
  CopySelector(const ir::VarNode* vthread, ir::Var v, const std::unordered_map<const ir::BufferNode*, ir::Buffer>& owned)
      : vthread_(vthread), v_(std::move(v)), owned_(owned) {}

 protected:
  using ir::StmtExprMutator::visit_;
  ir::Expr visit_(const ir::VarNode* op) override { return op == vthread_ ? ir::Expr(v_) : ir::Expr(op); }
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr e = ir::StmtExprMutator::visit_(op);
    auto it = owned_.find(op->buffer.get());
    if (it == owned_.end()) return e;
    return ir::BufferLoadNode::make(it->second, select(op->buffer, e.as<ir::BufferLoadNode>()->indices));
  }
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    auto it = owned_.find(op->buffer.get());
    if (it == owned_.end()) return s;
    const auto* store = s.as<ir::BufferStoreNode>();
    return ir::BufferStoreNode::make(it->second, store->value, select(op->buffer, store->indices));
  }
  ir::Stmt visit_(const ir::AllocateNode* op) override {
    ir::Stmt s = ir::StmtExprMutator::visit_(op);
    auto it = owned_.find(op->buffer.get());
    if (it == owned_.end()) return s;
    return ir::AllocateNode::make(it->second, s.as<ir::AllocateNode>()->body);
  }

 private:
  std::vector<ir::Expr> select(const ir::Buffer& buffer, std::vector<ir::Expr> indices) const {
    if (buffer.ndim() == 1) {
      ir::DataType type = indices[0].dtype();
      ir::Expr v = v_.dtype() == type ? ir::Expr(v_) : ir::cast(type, v_);
      return {v * ir::make_const(type, static_cast<double>(buffer->shape[0])) + indices[0]};
    }
    indices.insert(indices.begin(), v_);
    return indices;
  }

  const ir::VarNode* vthread_;
  ir::Var v_;
  const std::unordered_map<const ir::BufferNode*, ir::Buffer>& owned_;
};

class Injector {
 public:
  Injector(const ir::ForNode* loop, std::unordered_map<const ir::BufferNode*, ir::Buffer> owned)
      : loop_(loop), vthread_(loop->loop_var.get()), owned_(std::move(owned)) {}

  ir::Stmt inject(const ir::Stmt& s) {
    TouchFinder touch(vthread_, owned_);
    touch.visit(s);
    // Run once what every virtual thread would do alike.
    if (!touch.touches && !touch.rereads_stored) return s;
    if (const auto* seq = s.as<ir::SeqStmtNode>()) {
      std::vector<ir::Stmt> out;
      for (const ir::Stmt& child : seq->seq) out.push_back(inject(child));
      return ir::SeqStmtNode::make(std::move(out));
    }
    if (const auto* alloc = s.as<ir::AllocateNode>()) {
      auto it = owned_.find(alloc->buffer.get());
      return ir::AllocateNode::make(it == owned_.end() ? alloc->buffer : it->second, inject(alloc->body));
    }
    if (const auto* loop = s.as<ir::ForNode>();
        loop != nullptr && loop->for_kind != ir::ForKind::kVectorized && !depends(loop->min) && !depends(loop->extent)) {
      return ir::ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, inject(loop->body),
                               loop->thread_tag, loop->annotations);
    }
    if (const auto* branch = s.as<ir::IfThenElseNode>(); branch != nullptr && !depends(branch->condition)) {
      return ir::IfThenElseNode::make(branch->condition, inject(branch->then_case),
                                      branch->else_case.defined() ? inject(branch->else_case) : ir::Stmt());
    }
    // A fresh variable per copy of the loop: each is defined once.
    ir::Var v(loop_->loop_var.name(), loop_->loop_var.dtype());
    ir::Stmt body = CopySelector(vthread_, v, owned_).visit(s);
    return ir::ForNode::make(v, loop_->min, loop_->extent, ir::ForKind::kUnrolled, body, "",
                             {{std::string(kVirtualThreadAnnotation), loop_->thread_tag}});
  }

 private:
  bool depends(const ir::Expr& e) const {
    return gpu::uses_var(e, [&](const ir::VarNode* v) { return v == vthread_; });
  }

  const ir::ForNode* loop_;
  const ir::VarNode* vthread_;
  std::unordered_map<const ir::BufferNode*, ir::Buffer> owned_;
};

class VirtualThreadInjector : public ir::StmtMutator {
 protected:
  using ir::StmtMutator::visit_;
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt s = ir::StmtMutator::visit_(op);  // inner virtual threads first
    const auto* loop = s.as<ir::ForNode>();
    if (loop->for_kind != ir::ForKind::kThreadBinding || !gpu::is_vthread_tag(loop->thread_tag)) return s;
    std::optional<int64_t> extent = ir::as_const_int(loop->extent);
    DRAGON_CHECK(extent.has_value(), "virtual thread loop '{}' has a non-constant extent", loop->loop_var.name());
    BufferSet owned_set;
    for (bool grew = true; grew;) {
      PrivateBufferFinder finder(loop->loop_var.get(), owned_set);
      finder.visit(loop->body);
      grew = finder.grew;
    }
    std::unordered_map<const ir::BufferNode*, ir::Buffer> owned;
    for (const ir::BufferNode* b : owned_set) {
      std::vector<int64_t> shape = b->shape;
      if (shape.size() == 1) {
        shape[0] *= *extent;
      } else {
        shape.insert(shape.begin(), *extent);
      }
      owned.emplace(b, ir::Buffer::make(b->name, b->dtype, shape, b->scope));
    }
    return Injector(loop, std::move(owned)).inject(loop->body);
  }
};

}  // namespace

ir::PrimFunc inject_virtual_threads(const ir::PrimFunc& func) {
  VirtualThreadInjector injector;
  ir::Stmt body = injector.visit(func->body);
  return body.same_as(func->body) ? func : func.with_body(body);
}

}  // namespace dragon::lower
