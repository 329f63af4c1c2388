// ir/uses_var.h: one visit of the whole expression, noting the variable when met.
#include "dragon/ir/uses_var.h"

#include "dragon/ir/functor.h"

namespace dragon::ir {

bool uses_var(const Expr& e, const VarNode* var) {
  struct Finder : ExprVisitor {
    const VarNode* var = nullptr;
    bool found = false;
    using ExprVisitor::visit_;
    void visit_(const VarNode* op) override { found = found || op == var; }
  } finder;
  finder.var = var;
  finder.visit(e);
  return finder.found;
}

}  // namespace dragon::ir
