// Min, Max and comparisons. Integer cases are decided by the range of a - b, computed
// exactly through the affine form (min(i, 64) == i when i < 64; i < 64 is true under
// that range). Floats are only folded: x == x is false for NaN.
#include "const_fold.h"
#include "dragon/ir/op.h"
#include "expr_equal.h"
#include "rewriter.h"

namespace dragon::ir::simplify_detail {

Expr ExprSimplifier::rewrite_min_max(NodeKind kind, const Expr& a, const Expr& b) {
  bool is_min = kind == NodeKind::Min;
  // min(x, x) == x for every type, NaN included.
  if (deep_equal(a, b)) return a;
  if (!a.dtype().is_int() || !a.dtype().is_scalar()) return make_binary(kind, a, b);
  if (auto d = difference_bound(a, b)) {
    if (d->max <= 0 && d->max != Interval::kPosInf) return is_min ? a : b;
    if (d->min >= 0 && d->min != Interval::kNegInf) return is_min ? b : a;
  }
  // min(min(x, c1), c2) == min(x, min(c1, c2)); likewise for max.
  if (as_const_int(b)) {
    const auto* inner_min = a.as<MinNode>();
    const auto* inner_max = a.as<MaxNode>();
    Expr x = is_min ? (inner_min ? inner_min->a : Expr()) : (inner_max ? inner_max->a : Expr());
    Expr c1 = is_min ? (inner_min ? inner_min->b : Expr()) : (inner_max ? inner_max->b : Expr());
    if (x.defined() && as_const_int(c1)) {
      if (auto c = fold_binary(kind, c1, b)) return rewrite_min_max(kind, x, *c);
    }
  }
  return make_binary(kind, a, b);
}

Expr ExprSimplifier::rewrite_compare(NodeKind kind, const Expr& a, const Expr& b) {
  Expr plain = make_binary(kind, a, b);
  DataType type = a.dtype();
  if (!type.is_scalar() || !(type.is_int() || type.is_bool())) return plain;
  if (deep_equal(a, b)) {
    bool holds = kind == NodeKind::EQ || kind == NodeKind::LE || kind == NodeKind::GE;
    return make_bool(holds);
  }
  if (!type.is_int()) return plain;
  auto d = difference_bound(a, b);
  if (!d) return plain;
  // d encloses a - b: a comparison is decided when the whole interval agrees.
  bool below = d->max < 0, at_most = d->max <= 0, above = d->min > 0, at_least = d->min >= 0;
  if (d->max == Interval::kPosInf) below = at_most = false;
  if (d->min == Interval::kNegInf) above = at_least = false;
  switch (kind) {
    case NodeKind::LT: return below ? make_bool(true) : at_least ? make_bool(false) : plain;
    case NodeKind::LE: return at_most ? make_bool(true) : above ? make_bool(false) : plain;
    case NodeKind::GT: return above ? make_bool(true) : at_most ? make_bool(false) : plain;
    case NodeKind::GE: return at_least ? make_bool(true) : below ? make_bool(false) : plain;
    case NodeKind::EQ: return (below || above) ? make_bool(false) : (at_most && at_least) ? make_bool(true) : plain;
    case NodeKind::NE: return (below || above) ? make_bool(true) : (at_most && at_least) ? make_bool(false) : plain;
    default: return plain;
  }
}

}  // namespace dragon::ir::simplify_detail
