// Interval bounds and loop coefficients of index expressions (index_analysis.h).
#include "index_analysis.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "dragon/ir/functor.h"

namespace dragon::search::features {
namespace {

std::optional<double> constant(const ir::Expr& e) {
  if (const auto* i = e.as<ir::IntImmNode>()) return static_cast<double>(i->value);
  if (const auto* f = e.as<ir::FloatImmNode>()) return f->value;
  return std::nullopt;
}

Interval hull(const Interval& a, const Interval& b) {
  if (!a.known || !b.known) return Interval::unknown();
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), true};
}

Interval multiply(const Interval& a, const Interval& b) {
  if (!a.known || !b.known) return Interval::unknown();
  double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4), true};
}

// Division by a positive constant, rounding with `round` (floor or trunc, monotonic).
template <typename Round>
Interval divide(const Interval& a, double divisor, Round round) {
  if (!a.known || divisor <= 0) return Interval::unknown();
  return {round(a.lo / divisor), round(a.hi / divisor), true};
}

Interval floor_mod(const Interval& a, double divisor) {
  if (!a.known || divisor <= 0) return Interval::unknown();
  const double q_lo = std::floor(a.lo / divisor), q_hi = std::floor(a.hi / divisor);
  if (q_lo == q_hi) return {a.lo - q_lo * divisor, a.hi - q_lo * divisor, true};
  return {0, divisor - 1, true};
}

}  // namespace

Interval bound(const ir::Expr& e, const VarRanges& ranges) {
  switch (e.kind()) {
    case ir::NodeKind::IntImm:
    case ir::NodeKind::FloatImm: return Interval::point(*constant(e));
    case ir::NodeKind::Var: {
      const Interval* r = ranges.find(e.as<ir::VarNode>());
      return r != nullptr ? *r : Interval::unknown();
    }
    case ir::NodeKind::Add: {
      const auto* op = e.as<ir::AddNode>();
      Interval a = bound(op->a, ranges), b = bound(op->b, ranges);
      if (!a.known || !b.known) return Interval::unknown();
      return {a.lo + b.lo, a.hi + b.hi, true};
    }
    case ir::NodeKind::Sub: {
      const auto* op = e.as<ir::SubNode>();
      Interval a = bound(op->a, ranges), b = bound(op->b, ranges);
      if (!a.known || !b.known) return Interval::unknown();
      return {a.lo - b.hi, a.hi - b.lo, true};
    }
    case ir::NodeKind::Mul: {
      const auto* op = e.as<ir::MulNode>();
      return multiply(bound(op->a, ranges), bound(op->b, ranges));
    }
    case ir::NodeKind::FloorDiv: {
      const auto* op = e.as<ir::FloorDivNode>();
      auto d = constant(op->b);
      return d ? divide(bound(op->a, ranges), *d, [](double x) { return std::floor(x); }) : Interval::unknown();
    }
    case ir::NodeKind::Div: {
      const auto* op = e.as<ir::DivNode>();
      auto d = constant(op->b);
      return d ? divide(bound(op->a, ranges), *d, [](double x) { return std::trunc(x); }) : Interval::unknown();
    }
    case ir::NodeKind::FloorMod: {
      const auto* op = e.as<ir::FloorModNode>();
      auto d = constant(op->b);
      return d ? floor_mod(bound(op->a, ranges), *d) : Interval::unknown();
    }
    case ir::NodeKind::Mod: {  // truncating: same as floor mod for non-negative operands
      const auto* op = e.as<ir::ModNode>();
      auto d = constant(op->b);
      Interval a = bound(op->a, ranges);
      return d && a.known && a.lo >= 0 ? floor_mod(a, *d) : Interval::unknown();
    }
    case ir::NodeKind::Min: {
      const auto* op = e.as<ir::MinNode>();
      Interval a = bound(op->a, ranges), b = bound(op->b, ranges);
      if (!a.known || !b.known) return Interval::unknown();
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi), true};
    }
    case ir::NodeKind::Max: {
      const auto* op = e.as<ir::MaxNode>();
      Interval a = bound(op->a, ranges), b = bound(op->b, ranges);
      if (!a.known || !b.known) return Interval::unknown();
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi), true};
    }
    case ir::NodeKind::Select: {
      const auto* op = e.as<ir::SelectNode>();
      return hull(bound(op->true_value, ranges), bound(op->false_value, ranges));
    }
    case ir::NodeKind::Cast: return bound(e.as<ir::CastNode>()->value, ranges);
    default: return Interval::unknown();
  }
}

double coefficient(const ir::Expr& e, const ir::VarNode* var) {
  switch (e.kind()) {
    case ir::NodeKind::IntImm:
    case ir::NodeKind::FloatImm: return 0;
    case ir::NodeKind::Var: return e.get() == var ? 1 : 0;
    case ir::NodeKind::Add: {
      const auto* op = e.as<ir::AddNode>();
      return coefficient(op->a, var) + coefficient(op->b, var);
    }
    case ir::NodeKind::Sub: {
      const auto* op = e.as<ir::SubNode>();
      return coefficient(op->a, var) - coefficient(op->b, var);
    }
    case ir::NodeKind::Mul: {
      const auto* op = e.as<ir::MulNode>();
      if (auto k = constant(op->b)) return coefficient(op->a, var) * *k;
      if (auto k = constant(op->a)) return *k * coefficient(op->b, var);
      return uses_var(e, var) ? 1 : 0;
    }
    case ir::NodeKind::FloorDiv:
    case ir::NodeKind::Div: {
      // One step moves the quotient by c / d, i.e. by 0 most steps when |c| < d.
      const ir::Expr& a = e.kind() == ir::NodeKind::Div ? e.as<ir::DivNode>()->a : e.as<ir::FloorDivNode>()->a;
      const ir::Expr& b = e.kind() == ir::NodeKind::Div ? e.as<ir::DivNode>()->b : e.as<ir::FloorDivNode>()->b;
      auto d = constant(b);
      if (!d || *d == 0) return uses_var(e, var) ? 1 : 0;
      return std::trunc(coefficient(a, var) / *d);
    }
    case ir::NodeKind::FloorMod:
    case ir::NodeKind::Mod: {
      const ir::Expr& a = e.kind() == ir::NodeKind::Mod ? e.as<ir::ModNode>()->a : e.as<ir::FloorModNode>()->a;
      const ir::Expr& b = e.kind() == ir::NodeKind::Mod ? e.as<ir::ModNode>()->b : e.as<ir::FloorModNode>()->b;
      auto d = constant(b);
      if (!d || *d == 0) return uses_var(e, var) ? 1 : 0;
      return std::fmod(coefficient(a, var), *d);
    }
    case ir::NodeKind::Min:
    case ir::NodeKind::Max: {
      const ir::Expr& a = e.kind() == ir::NodeKind::Min ? e.as<ir::MinNode>()->a : e.as<ir::MaxNode>()->a;
      const ir::Expr& b = e.kind() == ir::NodeKind::Min ? e.as<ir::MinNode>()->b : e.as<ir::MaxNode>()->b;
      double ca = coefficient(a, var), cb = coefficient(b, var);
      return std::abs(ca) >= std::abs(cb) ? ca : cb;
    }
    case ir::NodeKind::Cast: return coefficient(e.as<ir::CastNode>()->value, var);
    default: return uses_var(e, var) ? 1 : 0;
  }
}

}  // namespace dragon::search::features
