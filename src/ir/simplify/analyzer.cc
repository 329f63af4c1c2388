// Analyzer: the variable ranges it was told, and the entry points of simplification and
// proof. The rules themselves are in rewrite_*.cc; bounds in const_int_bound.cc.
#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "const_int_bound.h"
#include "expr_equal.h"
#include "rewriter.h"

namespace dragon::ir {

using simplify_detail::ExprSimplifier;
using simplify_detail::Interval;

void Analyzer::bind(const Var& var, int64_t min, int64_t extent) {
  DRAGON_CHECK(var.defined() && var.dtype().is_int(), "bind of a non-integer variable");
  auto max = extent > 0 ? simplify_detail::checked_add(min, extent - 1) : std::nullopt;
  if (!max) {
    // An empty range: code under it never runs, so there is nothing to know.
    ranges_.erase(var.get());
    return;
  }
  ranges_[var.get()] = {min, *max};
  keep_alive_[var.get()] = var;
}

void Analyzer::bind(const Var& var, const Range& range) {
  DRAGON_CHECK(var.defined() && var.dtype().is_int(), "bind of a non-integer variable");
  // A symbolic range binds the hull of every value it can start at and reach.
  Interval lo = simplify_detail::bound_of(simplify(range.min), *this);
  Interval extent = simplify_detail::bound_of(simplify(range.extent), *this);
  if (extent.max <= 0) {
    ranges_.erase(var.get());
    return;
  }
  int64_t hi = Interval::kPosInf;
  if (lo.max != Interval::kPosInf && extent.max != Interval::kPosInf) {
    hi = simplify_detail::checked_add(lo.max, extent.max - 1).value_or(Interval::kPosInf);
  }
  if (lo.min == Interval::kNegInf && hi == Interval::kPosInf) {
    ranges_.erase(var.get());
    return;
  }
  ranges_[var.get()] = {lo.min, hi};
  keep_alive_[var.get()] = var;
}

std::optional<std::pair<int64_t, int64_t>> Analyzer::var_bound(const VarNode* var) const {
  auto it = ranges_.find(var);
  if (it == ranges_.end()) return std::nullopt;
  return it->second;
}

Expr Analyzer::simplify(const Expr& e) const {
  DRAGON_CHECK(e.defined(), "simplify of an undefined expression");
  return ExprSimplifier(*this).simplify(e);
}

bool Analyzer::can_prove(const Expr& condition) const {
  DRAGON_CHECK(condition.defined() && condition.dtype().is_bool(), "can_prove of a non-bool expression");
  Expr simplified = simplify(condition);
  if (auto c = as_const_int(simplified)) return *c != 0;
  if (const auto* both = simplified.as<AndNode>()) return can_prove(both->a) && can_prove(both->b);
  if (const auto* either = simplified.as<OrNode>()) return can_prove(either->a) || can_prove(either->b);
  return false;
}

bool Analyzer::can_prove_equal(const Expr& a, const Expr& b) const {
  if (a.same_as(b)) return true;
  if (!(a.dtype() == b.dtype())) return false;
  if (a.dtype().is_scalar() && (a.dtype().is_int() || a.dtype().is_bool())) return can_prove(eq(a, b));
  // Floats: only the same expression after simplification (no reassociation).
  return simplify_detail::deep_equal(simplify(a), simplify(b));
}

Expr simplify(const Expr& e) { return Analyzer().simplify(e); }

}  // namespace dragon::ir
