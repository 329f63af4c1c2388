// Add, Sub and Mul. Integers go through the canonical affine form (i*8 + j - j + 3*i
// becomes i*11); floats are only folded, plus the identities that are exact in IEEE
// arithmetic for every operand, -0.0 and NaN included (x*1, x/1, x-0, x+(-0)).
#include <cmath>

#include "dragon/ir/op.h"
#include "rewriter.h"

namespace dragon::ir::simplify_detail {
namespace {

bool is_float_const(const Expr& e, double value, bool negative_zero = false) {
  const auto* imm = e.as<FloatImmNode>();
  return imm != nullptr && imm->value == value && std::signbit(imm->value) == negative_zero;
}

Expr rewrite_float(NodeKind kind, const Expr& a, const Expr& b) {
  switch (kind) {
    case NodeKind::Add:
      if (is_float_const(b, 0.0, true)) return a;
      if (is_float_const(a, 0.0, true)) return b;
      break;
    case NodeKind::Sub:
      if (is_float_const(b, 0.0)) return a;
      break;
    case NodeKind::Mul:
      if (is_float_const(b, 1.0)) return a;
      if (is_float_const(a, 1.0)) return b;
      break;
    case NodeKind::Div:
      if (is_float_const(b, 1.0)) return a;
      break;
    default: break;
  }
  return make_binary(kind, a, b);
}

}  // namespace

Expr ExprSimplifier::rewrite_arith(NodeKind kind, const Expr& a, const Expr& b) {
  if (a.dtype().is_float()) return a.dtype().is_scalar() ? rewrite_float(kind, a, b) : make_binary(kind, a, b);
  Expr plain = make_binary(kind, a, b);
  auto form = LinearForm::from_expr(plain);
  if (!form || !form->merge_div_mod_pairs()) return plain;
  return form->to_expr().value_or(plain);
}

}  // namespace dragon::ir::simplify_detail
