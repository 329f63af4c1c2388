// The arithmetic simplifier: constant folding, canonical affine form for integer index
// expressions, and floordiv/floormod of split and fused indices under known variable
// ranges (floordiv(i * 8 + j, 8) == i when 0 <= j < 8). Never changes a value.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>

#include "dragon/ir/stmt.h"

namespace dragon::ir {

// Inclusive integer bounds of an expression; nullopt on a side means unbounded.
struct ConstIntBound {
  std::optional<int64_t> min;
  std::optional<int64_t> max;
};

// Known facts about variables (their ranges), and the simplification and proofs that
// use them. Cheap to copy; schedules make one per transformation.
class Analyzer {
 public:
  // `var` takes values in [range.min, range.min + range.extent).
  void bind(const Var& var, const Range& range);
  void bind(const Var& var, int64_t min, int64_t extent);

  Expr simplify(const Expr& e) const;
  // True only when `condition` (bool) holds for every value of the bound variables.
  bool can_prove(const Expr& condition) const;
  bool can_prove_equal(const Expr& a, const Expr& b) const;
  ConstIntBound const_int_bound(const Expr& e) const;
  // The range [min, max] bound to `var`, if any.
  std::optional<std::pair<int64_t, int64_t>> var_bound(const VarNode* var) const;

 private:
  std::unordered_map<const VarNode*, std::pair<int64_t, int64_t>> ranges_;  // [min, max]
  std::unordered_map<const VarNode*, Var> keep_alive_;
};

// Simplifies with no known ranges.
Expr simplify(const Expr& e);
// Simplifies every expression of a statement, binding each loop variable to its range
// and each block iteration variable to its domain on the way down.
Stmt simplify(const Stmt& s);

}  // namespace dragon::ir
