// Integer intervals with saturating ends, the arithmetic behind const_int_bound and the
// simplifier's range reasoning. Private to src/ir/simplify; not a public bound type.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "dragon/ir/dtype.h"

namespace dragon::ir::simplify_detail {

// [min, max] over the integers. kNegInf / kPosInf stand for unbounded ends; an end that
// would overflow int64 becomes unbounded, so every interval encloses the true values.
// Invariant: min is never kPosInf and max is never kNegInf.
struct Interval {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

  int64_t min = kNegInf;
  int64_t max = kPosInf;

  static Interval everything() { return {}; }
  static Interval point(int64_t value);
  static Interval make(int64_t min, int64_t max);
  // The values of an integer or bool type; everything for other types.
  static Interval of_type(DataType type);

  bool is_point() const { return min == max && min != kNegInf && max != kPosInf; }
  bool bounded() const { return min != kNegInf && max != kPosInf; }
  bool within(const Interval& outer) const { return min >= outer.min && max <= outer.max && bounded(); }
};

// a and b both enclose the values; when they are disjoint, b is returned.
Interval intersect(const Interval& a, const Interval& b);
Interval hull(const Interval& a, const Interval& b);
Interval add(const Interval& a, const Interval& b);
Interval sub(const Interval& a, const Interval& b);
Interval mul(const Interval& a, const Interval& b);
Interval scale(const Interval& a, int64_t factor);
Interval floordiv(const Interval& a, const Interval& b);
Interval floormod(const Interval& a, const Interval& b);
Interval truncdiv(const Interval& a, const Interval& b);
Interval truncmod(const Interval& a, const Interval& b);
Interval min(const Interval& a, const Interval& b);
Interval max(const Interval& a, const Interval& b);

// Exact int64 arithmetic; nullopt when the result does not fit.
std::optional<int64_t> checked_add(int64_t a, int64_t b);
std::optional<int64_t> checked_sub(int64_t a, int64_t b);
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
int64_t floor_div(int64_t a, int64_t b);  // b != 0, no INT64_MIN / -1
int64_t floor_mod(int64_t a, int64_t b);

}  // namespace dragon::ir::simplify_detail
