// floordiv / floormod by a positive constant, and truncdiv / truncmod where the dividend
// is provably non-negative (then they agree with the floor forms). The core split: write
// the dividend as c*Q + R; floordiv is Q + floordiv(R, c) and floormod is floormod(R, c),
// which resolve to constants when R's range fits inside one multiple of c. And the aligned
// split: g*A + R with g dividing c and 0 <= R < g (a vector's lanes under a split,
// floordiv(tx*8 + v, 64) with 0 <= v < 8) divides as A alone.
#include <algorithm>
#include <numeric>

#include "dragon/ir/op.h"
#include "expr_equal.h"
#include "rewriter.h"

namespace dragon::ir::simplify_detail {
namespace {

struct Split {
  LinearForm quotient;   // Q: terms whose coefficient c divides, divided by c
  LinearForm remainder;  // R: the rest, constant in [0, c)
};

// Splits form = c*Q + R; nullopt on overflow (cannot happen for a valid form, but cheap).
std::optional<Split> split_by(const LinearForm& form, int64_t c) {
  Split s{LinearForm(form.dtype()), LinearForm(form.dtype())};
  for (const LinearTerm& t : form.terms()) {
    bool ok = t.coeff % c == 0 ? s.quotient.add_term(t.term, t.coeff / c) : s.remainder.add_term(t.term, t.coeff);
    if (!ok) return std::nullopt;
  }
  if (!s.quotient.add_constant(floor_div(form.constant(), c)) ||
      !s.remainder.add_constant(floor_mod(form.constant(), c))) {
    return std::nullopt;
  }
  return s;
}

// The gcd of c and every coefficient and the constant of `form`.
int64_t common_factor(const LinearForm& form, int64_t c) {
  int64_t g = c;
  for (const LinearTerm& t : form.terms()) g = std::gcd(g, t.coeff);
  return std::gcd(g, form.constant());
}

// The single value floordiv(x, c) takes over `range`, if it takes only one.
std::optional<int64_t> constant_quotient(const Interval& range, int64_t c) {
  if (!range.bounded()) return std::nullopt;
  int64_t lo = floor_div(range.min, c), hi = floor_div(range.max, c);
  if (lo != hi) return std::nullopt;
  return lo;
}

// form = g*A + R where g divides c, 1 < g < c, A collects the terms whose coefficients g
// divides (and the multiples of g in the constant), R the rest; R's range must lie in
// [0, g) (checked by the caller, who knows the ranges). Then floordiv(form, c) ==
// floordiv(A, c/g) and floormod(form, c) == g*floormod(A, c/g) + R.
struct AlignedSplit {
  int64_t g;
  LinearForm aligned;   // A
  LinearForm residual;  // R
};

// Candidates, largest g first: the common factors of c with each coefficient and with the
// constant.
std::vector<AlignedSplit> aligned_splits(const LinearForm& form, int64_t c) {
  std::vector<int64_t> factors;
  for (const LinearTerm& t : form.terms()) factors.push_back(std::gcd(c, t.coeff));
  if (form.constant() != 0) factors.push_back(std::gcd(c, form.constant()));
  std::sort(factors.begin(), factors.end(), std::greater<>());
  factors.erase(std::unique(factors.begin(), factors.end()), factors.end());
  std::vector<AlignedSplit> splits;
  for (int64_t g : factors) {
    if (g <= 1 || g >= c) continue;
    AlignedSplit s{g, LinearForm(form.dtype()), LinearForm(form.dtype())};
    bool ok = true;
    for (const LinearTerm& t : form.terms()) {
      ok = ok && (t.coeff % g == 0 ? s.aligned.add_term(t.term, t.coeff / g) : s.residual.add_term(t.term, t.coeff));
    }
    ok = ok && s.aligned.add_constant(floor_div(form.constant(), g)) &&
         s.residual.add_constant(floor_mod(form.constant(), g));
    // Without residual terms this is the common-factor rule.
    if (ok && !s.residual.is_constant()) splits.push_back(std::move(s));
  }
  return splits;
}

std::optional<LinearForm> form_of(const Expr& e) {
  auto form = LinearForm::from_expr(e);
  if (!form || !form->merge_div_mod_pairs()) return std::nullopt;
  return form;
}

}  // namespace

Expr ExprSimplifier::rewrite_floordiv(const Expr& a, const Expr& b) {
  Expr plain = FloorDivNode::make(a, b);
  auto c = as_const_int(b);
  if (!c || *c <= 0 || !a.dtype().is_scalar()) return plain;
  if (*c == 1) return a;
  DataType type = a.dtype();
  if (auto k = constant_quotient(bound(a), *c); k && *k >= int_min_value(type) && *k <= int_max_value(type)) {
    return IntImmNode::make(type, *k);
  }

  if (auto form = form_of(a)) {
    if (auto s = split_by(*form, *c)) {
      Interval r = bound(s->remainder);
      if (auto k = constant_quotient(r, *c)) {
        // floordiv(i*8 + j, 8) == i when 0 <= j < 8.
        if (s->quotient.add_constant(*k)) {
          if (auto q = s->quotient.to_expr()) return *q;
        }
      } else if (!s->quotient.is_constant() && r.min >= 0 && r.within(Interval::of_type(type))) {
        // A non-negative remainder that fits the type: pull the multiples of c out.
        auto q = s->quotient.to_expr();
        auto rest = s->remainder.to_expr();
        if (q && rest) return rewrite_arith(NodeKind::Add, *q, rewrite_floordiv(*rest, b));
      }
    }
    for (const AlignedSplit& s : aligned_splits(*form, *c)) {
      Interval r = bound(s.residual);
      if (!r.bounded() || r.min < 0 || r.max >= s.g) continue;
      // floordiv(tx*8 + v, 64) == floordiv(tx, 8) when 0 <= v < 8.
      if (auto aligned = s.aligned.to_expr()) return rewrite_floordiv(*aligned, IntImmNode::make(type, *c / s.g));
    }
    int64_t g = common_factor(*form, *c);
    if (g > 1) {
      // floordiv(g*y, g*c') == floordiv(y, c').
      LinearForm reduced(type);
      bool ok = true;
      for (const LinearTerm& t : form->terms()) ok = ok && reduced.add_term(t.term, t.coeff / g);
      ok = ok && reduced.add_constant(form->constant() / g);
      if (ok) {
        if (auto y = reduced.to_expr()) return rewrite_floordiv(*y, IntImmNode::make(type, *c / g));
      }
    }
  }
  if (const auto* inner = a.as<FloorDivNode>()) {
    // floordiv(floordiv(x, a), c) == floordiv(x, a*c) for positive a and c.
    auto c1 = as_const_int(inner->b);
    if (c1 && *c1 > 0) {
      auto product = checked_mul(*c1, *c);
      if (product && *product <= int_max_value(type)) {
        return rewrite_floordiv(inner->a, IntImmNode::make(type, *product));
      }
    }
  }
  return plain;
}

Expr ExprSimplifier::rewrite_floormod(const Expr& a, const Expr& b) {
  Expr plain = FloorModNode::make(a, b);
  auto c = as_const_int(b);
  if (!c || *c <= 0 || !a.dtype().is_scalar()) return plain;
  DataType type = a.dtype();
  if (*c == 1) return make_zero(type);
  if (auto k = constant_quotient(bound(a), *c)) {
    // The dividend stays inside one multiple of c: floormod(x, n) == x for 0 <= x < n.
    if (*k == 0) return a;
    auto shift = checked_mul(*k, *c);
    if (shift && *shift >= int_min_value(type) && *shift <= int_max_value(type)) {
      return rewrite_arith(NodeKind::Sub, a, IntImmNode::make(type, *shift));
    }
  }
  if (auto form = form_of(a)) {
    if (auto s = split_by(*form, *c)) {
      bool has_multiples = !s->quotient.is_constant() || s->quotient.constant() != 0;
      // floormod(c*Q + R, c) == floormod(R, c), as long as R itself is computed exactly.
      if (has_multiples && bound(s->remainder).within(Interval::of_type(type))) {
        if (auto rest = s->remainder.to_expr()) return rewrite_floormod(*rest, b);
      }
    }
    for (const AlignedSplit& s : aligned_splits(*form, *c)) {
      Interval r = bound(s.residual);
      if (!r.bounded() || r.min < 0 || r.max >= s.g) continue;
      // floormod(tx*8 + v, 64) == floormod(tx, 8)*8 + v when 0 <= v < 8.
      auto aligned = s.aligned.to_expr();
      auto residual = s.residual.to_expr();
      if (!aligned || !residual) continue;
      Expr inner = rewrite_floormod(*aligned, IntImmNode::make(type, *c / s.g));
      return rewrite_arith(NodeKind::Add, rewrite_arith(NodeKind::Mul, inner, IntImmNode::make(type, s.g)), *residual);
    }
    int64_t g = common_factor(*form, *c);
    if (g > 1) {
      // floormod(g*y, g*c') == g * floormod(y, c').
      LinearForm reduced(type);
      bool ok = true;
      for (const LinearTerm& t : form->terms()) ok = ok && reduced.add_term(t.term, t.coeff / g);
      ok = ok && reduced.add_constant(form->constant() / g);
      if (ok) {
        if (auto y = reduced.to_expr()) {
          Expr inner = rewrite_floormod(*y, IntImmNode::make(type, *c / g));
          return rewrite_arith(NodeKind::Mul, inner, IntImmNode::make(type, g));
        }
      }
    }
  }
  if (const auto* inner = a.as<FloorModNode>()) {
    // floormod(floormod(x, k*c), c) == floormod(x, c).
    auto c1 = as_const_int(inner->b);
    if (c1 && *c1 > 0 && *c1 % *c == 0) return rewrite_floormod(inner->a, b);
  }
  return plain;
}

Expr ExprSimplifier::rewrite_truncdiv(const Expr& a, const Expr& b) {
  Expr plain = DivNode::make(a, b);
  auto c = as_const_int(b);
  if (!c || !a.dtype().is_scalar()) return plain;
  if (*c == 1) return a;
  if (*c > 0 && bound(a).min >= 0) {
    // Non-negative dividend, positive divisor: truncation and floor agree.
    Expr result = rewrite_floordiv(a, b);
    return deep_equal(result, FloorDivNode::make(a, b)) ? plain : result;
  }
  if (const auto* inner = a.as<DivNode>()) {
    // truncdiv(truncdiv(x, a), c) == truncdiv(x, a*c) for positive a and c.
    auto c1 = as_const_int(inner->b);
    if (c1 && *c1 > 0 && *c > 0) {
      auto product = checked_mul(*c1, *c);
      if (product && *product <= int_max_value(a.dtype())) {
        return rewrite_truncdiv(inner->a, IntImmNode::make(a.dtype(), *product));
      }
    }
  }
  return plain;
}

Expr ExprSimplifier::rewrite_truncmod(const Expr& a, const Expr& b) {
  Expr plain = ModNode::make(a, b);
  auto c = as_const_int(b);
  if (!c || !a.dtype().is_scalar()) return plain;
  if (*c == 1 || *c == -1) return make_zero(a.dtype());
  if (*c > 0 && bound(a).min >= 0) {
    Expr result = rewrite_floormod(a, b);
    return deep_equal(result, FloorModNode::make(a, b)) ? plain : result;
  }
  return plain;
}

}  // namespace dragon::ir::simplify_detail
