// simplify(Stmt): simplifies every expression of a statement with the ranges known at
// that point: a loop variable ranges over [min, min + extent), a block iteration variable
// over its domain inside the block. Unchanged statements come back as the same node.
#include "dragon/ir/functor.h"
#include "dragon/ir/simplify.h"

namespace dragon::ir {
namespace {

class StmtSimplifier : public StmtMutator {
 protected:
  Expr mutate_expr(const Expr& e) override { return analyzer_.simplify(e); }

  Stmt visit_(const ForNode* op) override {
    Analyzer outer = analyzer_;
    analyzer_.bind(op->loop_var, Range{mutate_expr(op->min), mutate_expr(op->extent)});
    Stmt result = StmtMutator::visit_(op);
    analyzer_ = std::move(outer);
    return result;
  }

  Stmt visit_(const BlockNode* op) override {
    // Domains and everything inside see the block's variables only, bound to their domains.
    Analyzer outer = analyzer_;
    for (const IterVar& iv : op->iter_vars) {
      analyzer_.bind(iv.var, Range{mutate_expr(iv.dom.min), mutate_expr(iv.dom.extent)});
    }
    Stmt result = StmtMutator::visit_(op);
    analyzer_ = std::move(outer);
    return result;
  }

 private:
  Analyzer analyzer_;
};

}  // namespace

Stmt simplify(const Stmt& s) {
  DRAGON_CHECK(s.defined(), "simplify of an undefined statement");
  return StmtSimplifier().visit(s);
}

}  // namespace dragon::ir
