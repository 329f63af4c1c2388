// Dispatch over IR node kinds, and the recursive visitors and mutators every pass builds
// on. Callers use visit(expr) / visit(stmt); subclasses override visit_(const XNode*) and
// call the base's visit_ to recurse. Mutators return the very same node when nothing
// below it changed, so "unchanged" is a pointer comparison (CONVENTIONS.md habit 4).
#pragma once

#include <utility>
#include <vector>

#include "dragon/ir/expr.h"
#include "dragon/ir/stmt.h"
#include "dragon/support/error.h"

namespace dragon::ir {

// R visit(const Expr&) dispatches to the overload for the node's kind.
template <typename R>
class ExprFunctor {
 public:
  virtual ~ExprFunctor() = default;

  R visit(const Expr& e) {
    DRAGON_CHECK(e.defined(), "visit of an undefined expression");
    switch (e.kind()) {
#define DRAGON_EXPR_NODE(Name) \
  case NodeKind::Name: return visit_(static_cast<const Name##Node*>(e.get()));
#define DRAGON_BINARY_NODE(Name) DRAGON_EXPR_NODE(Name)
#include "dragon/ir/nodes.def"
      default: DRAGON_UNREACHABLE("{} is not an expression", node_kind_name(e.kind()));
    }
  }

 protected:
#define DRAGON_EXPR_NODE(Name) virtual R visit_(const Name##Node* op) = 0;
#define DRAGON_BINARY_NODE(Name) DRAGON_EXPR_NODE(Name)
#include "dragon/ir/nodes.def"
};

template <typename R>
class StmtFunctor {
 public:
  virtual ~StmtFunctor() = default;

  R visit(const Stmt& s) {
    DRAGON_CHECK(s.defined(), "visit of an undefined statement");
    switch (s.kind()) {
#define DRAGON_STMT_NODE(Name) \
  case NodeKind::Name: return visit_(static_cast<const Name##Node*>(s.get()));
#include "dragon/ir/nodes.def"
      default: DRAGON_UNREACHABLE("{} is not a statement", node_kind_name(s.kind()));
    }
  }

 protected:
#define DRAGON_STMT_NODE(Name) virtual R visit_(const Name##Node* op) = 0;
#include "dragon/ir/nodes.def"
};

// Walks every sub-expression.
class ExprVisitor : public ExprFunctor<void> {
 protected:
  void visit_(const IntImmNode*) override {}
  void visit_(const FloatImmNode*) override {}
  void visit_(const VarNode*) override {}
#define DRAGON_BINARY_NODE(Name)                \
  void visit_(const Name##Node* op) override {   \
    visit(op->a);                               \
    visit(op->b);                               \
  }
#include "dragon/ir/nodes.def"
  void visit_(const NotNode* op) override { visit(op->a); }
  void visit_(const SelectNode* op) override {
    visit(op->condition);
    visit(op->true_value);
    visit(op->false_value);
  }
  void visit_(const CastNode* op) override { visit(op->value); }
  void visit_(const CallNode* op) override {
    for (const Expr& arg : op->args) visit(arg);
  }
  void visit_(const BufferLoadNode* op) override {
    for (const Expr& index : op->indices) visit(index);
  }
};

// Rebuilds expressions bottom-up, reusing every node whose children did not change.
class ExprMutator : public ExprFunctor<Expr> {
 protected:
  Expr visit_(const IntImmNode* op) override { return Expr(op); }
  Expr visit_(const FloatImmNode* op) override { return Expr(op); }
  Expr visit_(const VarNode* op) override { return Expr(op); }
#define DRAGON_BINARY_NODE(Name)                                        \
  Expr visit_(const Name##Node* op) override {                           \
    Expr a = visit(op->a);                                              \
    Expr b = visit(op->b);                                              \
    if (a.same_as(op->a) && b.same_as(op->b)) return Expr(op);          \
    return Name##Node::make(std::move(a), std::move(b));                \
  }
#include "dragon/ir/nodes.def"
  Expr visit_(const NotNode* op) override;
  Expr visit_(const SelectNode* op) override;
  Expr visit_(const CastNode* op) override;
  Expr visit_(const CallNode* op) override;
  Expr visit_(const BufferLoadNode* op) override;

  // Mutates each element; returns true if any changed.
  bool visit_all(const std::vector<Expr>& in, std::vector<Expr>& out);
};

// Walks every statement and, through visit_expr, every expression in it (bounds,
// bindings, predicates, regions, indices, values).
class StmtVisitor : public StmtFunctor<void> {
 protected:
  virtual void visit_expr(const Expr& e) { (void)e; }
  void visit_range(const Range& r) {
    visit_expr(r.min);
    visit_expr(r.extent);
  }

  void visit_(const ForNode* op) override;
  void visit_(const BlockNode* op) override;
  void visit_(const BlockRealizeNode* op) override;
  void visit_(const SeqStmtNode* op) override;
  void visit_(const IfThenElseNode* op) override;
  void visit_(const BufferStoreNode* op) override;
  void visit_(const AllocateNode* op) override;
  void visit_(const EvaluateNode* op) override;
};

// A StmtVisitor whose expression hook walks expressions with an ExprVisitor;
// override the visit_ overloads of either kind (qualify calls to a base's visit_).
class StmtExprVisitor : public StmtVisitor, public ExprVisitor {
 public:
  using ExprVisitor::visit;
  using StmtVisitor::visit;

 protected:
  using ExprVisitor::visit_;
  using StmtVisitor::visit_;
  void visit_expr(const Expr& e) override { ExprVisitor::visit(e); }
};

// Rebuilds statements bottom-up, reusing unchanged nodes; expressions go through
// mutate_expr (identity by default).
class StmtMutator : public StmtFunctor<Stmt> {
 protected:
  virtual Expr mutate_expr(const Expr& e) { return e; }
  Range mutate_range(const Range& r);
  // Returns the same vector object's contents when unchanged (changed = false).
  std::vector<BufferRegion> mutate_regions(const std::vector<BufferRegion>& regions, bool& changed);

  Stmt visit_(const ForNode* op) override;
  Stmt visit_(const BlockNode* op) override;
  Stmt visit_(const BlockRealizeNode* op) override;
  Stmt visit_(const SeqStmtNode* op) override;
  Stmt visit_(const IfThenElseNode* op) override;
  Stmt visit_(const BufferStoreNode* op) override;
  Stmt visit_(const AllocateNode* op) override;
  Stmt visit_(const EvaluateNode* op) override;
};

// A StmtMutator that mutates expressions with an ExprMutator.
class StmtExprMutator : public StmtMutator, public ExprMutator {
 public:
  using ExprMutator::visit;
  using StmtMutator::visit;

 protected:
  using ExprMutator::visit_;
  using StmtMutator::visit_;
  Expr mutate_expr(const Expr& e) override { return ExprMutator::visit(e); }
};

}  // namespace dragon::ir
