// Saturating interval arithmetic: every result encloses all values the operation can
// produce from operands in the input intervals. Not aware of IR nodes (see const_int_bound.cc).
#include "interval.h"

#include <algorithm>
#include <array>

namespace dragon::ir::simplify_detail {
namespace {

constexpr int64_t kNegInf = Interval::kNegInf;
constexpr int64_t kPosInf = Interval::kPosInf;

bool is_inf(int64_t v) { return v == kNegInf || v == kPosInf; }
int sign(int64_t v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }

// Product of two interval ends in the extended integers; overflow saturates by sign.
int64_t mul_end(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (!is_inf(a) && !is_inf(b)) {
    if (auto p = checked_mul(a, b)) return *p;
  }
  return sign(a) * sign(b) > 0 ? kPosInf : kNegInf;
}

// a / b for an interval end a and a finite, non-zero b; `floor` picks the rounding.
int64_t div_end(int64_t a, int64_t b, bool floor) {
  if (is_inf(a)) return sign(a) * sign(b) > 0 ? kPosInf : kNegInf;
  return floor ? floor_div(a, b) : a / b;
}

// Smallest interval holding the four values (an end that is infinite stays infinite).
Interval from_corners(const std::array<int64_t, 4>& v) {
  return Interval::make(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
}

}  // namespace

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

Interval Interval::point(int64_t value) {
  // The extreme int64 values double as infinities; a point there is not representable.
  if (is_inf(value)) return everything();
  return {value, value};
}

Interval Interval::make(int64_t lo, int64_t hi) {
  Interval r;
  r.min = lo == kPosInf ? kNegInf : lo;
  r.max = hi == kNegInf ? kPosInf : hi;
  return r;
}

Interval Interval::of_type(DataType type) {
  if (type.is_bool()) return {0, 1};
  if (type.is_int()) return make(int_min_value(type), int_max_value(type));
  return everything();
}

Interval intersect(const Interval& a, const Interval& b) {
  Interval r{std::max(a.min, b.min), std::min(a.max, b.max)};
  // Disjoint: no value satisfies both (code that always overflows, or never runs); keep
  // b, which callers pass as the authoritative enclosure (a type's values).
  if (r.min > r.max) return b;
  return r;
}

Interval hull(const Interval& a, const Interval& b) { return {std::min(a.min, b.min), std::max(a.max, b.max)}; }

Interval add(const Interval& a, const Interval& b) {
  Interval r;
  if (a.min != kNegInf && b.min != kNegInf) r.min = checked_add(a.min, b.min).value_or(kNegInf);
  if (a.max != kPosInf && b.max != kPosInf) r.max = checked_add(a.max, b.max).value_or(kPosInf);
  return Interval::make(r.min, r.max);
}

Interval sub(const Interval& a, const Interval& b) { return add(a, scale(b, -1)); }

Interval mul(const Interval& a, const Interval& b) {
  return from_corners({mul_end(a.min, b.min), mul_end(a.min, b.max), mul_end(a.max, b.min), mul_end(a.max, b.max)});
}

Interval scale(const Interval& a, int64_t factor) { return mul(a, Interval::point(factor)); }

Interval floordiv(const Interval& a, const Interval& b) {
  if (!b.bounded() || (b.min <= 0 && b.max >= 0)) return Interval::everything();
  // floor(a / b) is monotone in each operand on one side of zero: the corners bound it.
  return from_corners({div_end(a.min, b.min, true), div_end(a.min, b.max, true), div_end(a.max, b.min, true),
                       div_end(a.max, b.max, true)});
}

Interval truncdiv(const Interval& a, const Interval& b) {
  if (!b.bounded() || (b.min <= 0 && b.max >= 0)) return Interval::everything();
  return from_corners({div_end(a.min, b.min, false), div_end(a.min, b.max, false), div_end(a.max, b.min, false),
                       div_end(a.max, b.max, false)});
}

Interval floormod(const Interval& a, const Interval& b) {
  if (!b.bounded() || (b.min <= 0 && b.max >= 0)) return Interval::everything();
  if (b.min > 0) {
    if (a.min >= 0 && a.max != kPosInf && a.max < b.min) return a;
    if (a.min >= 0) return {0, std::min(a.max, b.max - 1)};
    return {0, b.max - 1};
  }
  // A negative divisor: the result takes the divisor's sign.
  if (a.max <= 0 && a.min != kNegInf && a.min > b.max) return a;
  return {b.min + 1, 0};
}

Interval truncmod(const Interval& a, const Interval& b) {
  if (!b.bounded() || (b.min <= 0 && b.max >= 0)) return Interval::everything();
  // |a % b| < |b| and the result takes the sign of a.
  int64_t limit = std::max(b.max > 0 ? b.max : -b.max, b.min > 0 ? b.min : -b.min) - 1;
  if (a.min >= 0) return {0, std::min(a.max, limit)};
  if (a.max <= 0) return {std::max(a.min, -limit), 0};
  return {-limit, limit};
}

Interval min(const Interval& a, const Interval& b) { return {std::min(a.min, b.min), std::min(a.max, b.max)}; }
Interval max(const Interval& a, const Interval& b) { return {std::max(a.min, b.min), std::max(a.max, b.max)}; }

}  // namespace dragon::ir::simplify_detail
