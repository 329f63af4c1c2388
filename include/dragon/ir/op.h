// Operators and helpers for building expressions: a + b, floordiv(i, 8), select(c, x, y),
// cast(DataType::f16(), x), exp(x). Scalars next to an Expr take that Expr's type.
// No simplification happens here (see simplify.h).
#pragma once

#include <cstdint>
#include <optional>

#include "dragon/ir/expr.h"

namespace dragon::ir {

// An immediate of `dtype` holding `value` (IntImm for ints and bool, FloatImm for floats).
Expr make_const(DataType dtype, double value);
Expr make_zero(DataType dtype);
Expr make_one(DataType dtype);
Expr make_bool(bool value);
// Largest / smallest value of the type: +-inf for floats (identity of max/min).
Expr max_value(DataType dtype);
Expr min_value(DataType dtype);

// The value of an integer immediate, if `e` is one.
std::optional<int64_t> as_const_int(const Expr& e);
bool is_const_int(const Expr& e, int64_t value);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
// Float division; truncating division on integers (use floordiv for indices).
Expr operator/(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

#define DRAGON_SCALAR_OVERLOADS(op)               \
  Expr operator op(Expr a, int64_t b);            \
  Expr operator op(int64_t a, Expr b);            \
  Expr operator op(Expr a, int b);                \
  Expr operator op(int a, Expr b);                \
  Expr operator op(Expr a, double b);             \
  Expr operator op(double a, Expr b);
DRAGON_SCALAR_OVERLOADS(+)
DRAGON_SCALAR_OVERLOADS(-)
DRAGON_SCALAR_OVERLOADS(*)
DRAGON_SCALAR_OVERLOADS(/)
DRAGON_SCALAR_OVERLOADS(<)
DRAGON_SCALAR_OVERLOADS(<=)
DRAGON_SCALAR_OVERLOADS(>)
DRAGON_SCALAR_OVERLOADS(>=)
#undef DRAGON_SCALAR_OVERLOADS

Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr eq(Expr a, int64_t b);
Expr ne(Expr a, int64_t b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr floordiv(Expr a, int64_t b);
Expr floormod(Expr a, int64_t b);
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr min(Expr a, double b);
Expr max(Expr a, double b);
Expr select(Expr condition, Expr true_value, Expr false_value);
Expr cast(DataType dtype, Expr value);

Expr exp(Expr x);
Expr exp2(Expr x);
Expr expm1(Expr x);
Expr log(Expr x);
Expr log2(Expr x);
Expr log1p(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr sin(Expr x);
Expr cos(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);  // half to even, like torch.round
Expr trunc(Expr x);
Expr abs(Expr x);
Expr pow(Expr x, Expr y);
Expr isnan(Expr x);
Expr isinf(Expr x);

}  // namespace dragon::ir
