// ir/uses_var.h: one visit of the whole expression, noting the variable (or load) when met.
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

bool loads_buffer(const Expr& e, const BufferNode* buffer) {
  struct Finder : ExprVisitor {
    const BufferNode* buffer = nullptr;
    bool found = false;
    using ExprVisitor::visit_;
    void visit_(const BufferLoadNode* op) override {
      found = found || buffer == nullptr || op->buffer.get() == buffer;
      ExprVisitor::visit_(op);
    }
  } finder;
  finder.buffer = buffer;
  finder.visit(e);
  return finder.found;
}

}  // namespace dragon::ir
