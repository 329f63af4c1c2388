// And, Or, Not, Select, Cast and intrinsic calls: folding and the identities of boolean
// logic. Not of a comparison flips it, except < <= > >= on floats (NaN compares false).
#include "const_fold.h"
#include "dragon/ir/op.h"
#include "expr_equal.h"
#include "rewriter.h"

namespace dragon::ir::simplify_detail {

Expr ExprSimplifier::rewrite_and_or(NodeKind kind, const Expr& a, const Expr& b) {
  bool is_and = kind == NodeKind::And;
  // The absorbing value decides; the neutral one drops out. Operands have no side
  // effects, so dropping one is safe even when it is the first.
  auto ca = as_const_int(a), cb = as_const_int(b);
  if ((ca && (*ca != 0) != is_and) || (cb && (*cb != 0) != is_and)) return make_bool(!is_and);
  if (ca) return b;
  if (cb) return a;
  if (deep_equal(a, b)) return a;
  return make_binary(kind, a, b);
}

Expr ExprSimplifier::rewrite_not(const Expr& a) {
  if (auto folded = fold_not(a)) return *folded;
  if (const auto* inner = a.as<NotNode>()) return inner->a;
  if (const auto* eq = a.as<EQNode>()) return rewrite_compare(NodeKind::NE, eq->a, eq->b);
  if (const auto* ne = a.as<NENode>()) return rewrite_compare(NodeKind::EQ, ne->a, ne->b);
  auto flip = [&](NodeKind kind, const Expr& x, const Expr& y) -> Expr {
    if (x.dtype().is_float()) return NotNode::make(a);
    return rewrite_compare(kind, x, y);
  };
  if (const auto* op = a.as<LTNode>()) return flip(NodeKind::GE, op->a, op->b);
  if (const auto* op = a.as<LENode>()) return flip(NodeKind::GT, op->a, op->b);
  if (const auto* op = a.as<GTNode>()) return flip(NodeKind::LE, op->a, op->b);
  if (const auto* op = a.as<GENode>()) return flip(NodeKind::LT, op->a, op->b);
  return NotNode::make(a);
}

Expr ExprSimplifier::rewrite_select(const Expr& condition, const Expr& true_value, const Expr& false_value) {
  if (auto c = as_const_int(condition)) return *c != 0 ? true_value : false_value;
  if (deep_equal(true_value, false_value)) return true_value;
  if (true_value.dtype().is_bool() && true_value.dtype().is_scalar()) {
    if (is_const_int(true_value, 1) && is_const_int(false_value, 0)) return condition;
    if (is_const_int(true_value, 0) && is_const_int(false_value, 1)) return rewrite_not(condition);
  }
  return SelectNode::make(condition, true_value, false_value);
}

Expr ExprSimplifier::rewrite_cast(DataType type, const Expr& value) {
  if (value.dtype() == type) return value;
  if (auto folded = fold_cast(type, value)) return *folded;
  return CastNode::make(type, value);
}

Expr ExprSimplifier::rewrite_call(Intrinsic op, const std::vector<Expr>& args) {
  if (auto folded = fold_call(op, args)) return *folded;
  return CallNode::make(op, args);
}

}  // namespace dragon::ir::simplify_detail
