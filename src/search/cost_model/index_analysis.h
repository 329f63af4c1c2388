// Cheap analyses of index expressions for the per-store features: integer bounds under
// loop ranges (interval arithmetic, in double so products cannot overflow) and the
// coefficient of a loop variable (how far one step of the loop moves an index). Not the
// simplifier's Analyzer: no proofs, no rewriting, a few nanoseconds per node.
#pragma once

#include <utility>
#include <vector>

#include "dragon/ir/expr.h"
#include "dragon/ir/uses_var.h"

namespace dragon::search::features {

struct Interval {
  double lo = 0, hi = 0;
  bool known = true;  // false: data-dependent (a gather), callers clamp to the buffer
  static Interval point(double v) { return {v, v, true}; }
  static Interval unknown() { return {0, 0, false}; }
};

// The values variables take: each an inclusive interval, set and replaced as a walk moves
// through the loops. Lookups scan from the back (a loop nest is a short stack).
class VarRanges {
 public:
  void push(const ir::VarNode* var, double lo, double hi) { ranges_.push_back({var, Interval{lo, hi, true}}); }
  void pop() { ranges_.pop_back(); }
  void set(size_t i, double lo, double hi) { ranges_[i].second = Interval{lo, hi, true}; }
  size_t size() const { return ranges_.size(); }
  const Interval* find(const ir::VarNode* var) const {
    for (auto it = ranges_.rbegin(); it != ranges_.rend(); ++it) {
      if (it->first == var) return &it->second;
    }
    return nullptr;
  }

 private:
  std::vector<std::pair<const ir::VarNode*, Interval>> ranges_;
};

// Bounds of an integer expression; an unbound variable or a load is unknown.
Interval bound(const ir::Expr& e, const VarRanges& ranges);

// How much `e` changes when `var` grows by one, for affine indices (+, -, * and
// floordiv/floormod by constants, casts); 1 when `var` enters non-linearly (a gather, a
// product of variables), 0 when it does not appear.
double coefficient(const ir::Expr& e, const ir::VarNode* var);

// Whether `var` appears in `e` (ir/uses_var.h).
using ir::uses_var;

}  // namespace dragon::search::features
