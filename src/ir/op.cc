// Expression operators: thin wrappers over make() that adapt scalar operands.
#include "dragon/ir/op.h"

#include <cmath>
#include <limits>

#include "dragon/support/error.h"

namespace dragon::ir {

Expr make_const(DataType dtype, double value) {
  DRAGON_CHECK(dtype.is_scalar(), "constant of vector type {}", to_string(dtype));
  if (dtype.is_float()) return FloatImmNode::make(dtype, value);
  DRAGON_CHECK(std::isfinite(value) && value == std::trunc(value), "{} is not an integer constant for {}", value,
               to_string(dtype));
  return IntImmNode::make(dtype, static_cast<int64_t>(value));
}

Expr make_zero(DataType dtype) { return make_const(dtype, 0); }
Expr make_one(DataType dtype) { return make_const(dtype, 1); }
Expr make_bool(bool value) { return IntImmNode::make(DataType::boolean(), value ? 1 : 0); }

Expr max_value(DataType dtype) {
  if (dtype.is_float()) return FloatImmNode::make(dtype, std::numeric_limits<double>::infinity());
  return IntImmNode::make(dtype, int_max_value(dtype));
}

Expr min_value(DataType dtype) {
  if (dtype.is_float()) return FloatImmNode::make(dtype, -std::numeric_limits<double>::infinity());
  return IntImmNode::make(dtype, int_min_value(dtype));
}

std::optional<int64_t> as_const_int(const Expr& e) {
  if (const auto* imm = e.as<IntImmNode>()) return imm->value;
  return std::nullopt;
}

bool is_const_int(const Expr& e, int64_t value) {
  auto v = as_const_int(e);
  return v && *v == value;
}

namespace {
// A scalar operand next to an Expr becomes an immediate of the Expr's type.
Expr like(const Expr& other, double value) { return make_const(other.dtype(), value); }
}  // namespace

Expr operator+(Expr a, Expr b) { return AddNode::make(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return SubNode::make(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return MulNode::make(std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return DivNode::make(std::move(a), std::move(b)); }
Expr operator-(Expr a) { return SubNode::make(make_zero(a.dtype()), a); }
Expr operator<(Expr a, Expr b) { return LTNode::make(std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return LENode::make(std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return GTNode::make(std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return GENode::make(std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return AndNode::make(std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return OrNode::make(std::move(a), std::move(b)); }
Expr operator!(Expr a) { return NotNode::make(std::move(a)); }

#define DRAGON_SCALAR_OVERLOADS(op)                                                               \
  Expr operator op(Expr a, int64_t b) { return a op like(a, static_cast<double>(b)); }            \
  Expr operator op(int64_t a, Expr b) { return like(b, static_cast<double>(a)) op b; }            \
  Expr operator op(Expr a, int b) { return a op like(a, b); }                                     \
  Expr operator op(int a, Expr b) { return like(b, a) op b; }                                     \
  Expr operator op(Expr a, double b) { return a op like(a, b); }                                  \
  Expr operator op(double a, Expr b) { return like(b, a) op b; }
DRAGON_SCALAR_OVERLOADS(+)
DRAGON_SCALAR_OVERLOADS(-)
DRAGON_SCALAR_OVERLOADS(*)
DRAGON_SCALAR_OVERLOADS(/)
DRAGON_SCALAR_OVERLOADS(<)
DRAGON_SCALAR_OVERLOADS(<=)
DRAGON_SCALAR_OVERLOADS(>)
DRAGON_SCALAR_OVERLOADS(>=)
#undef DRAGON_SCALAR_OVERLOADS

Expr eq(Expr a, Expr b) { return EQNode::make(std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return NENode::make(std::move(a), std::move(b)); }
Expr eq(Expr a, int64_t b) { return eq(a, like(a, static_cast<double>(b))); }
Expr ne(Expr a, int64_t b) { return ne(a, like(a, static_cast<double>(b))); }
Expr floordiv(Expr a, Expr b) { return FloorDivNode::make(std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return FloorModNode::make(std::move(a), std::move(b)); }
Expr floordiv(Expr a, int64_t b) { return floordiv(a, like(a, static_cast<double>(b))); }
Expr floormod(Expr a, int64_t b) { return floormod(a, like(a, static_cast<double>(b))); }
Expr truncdiv(Expr a, Expr b) {
  DRAGON_CHECK(a.dtype().is_int(), "truncdiv of {}", to_string(a.dtype()));
  return DivNode::make(std::move(a), std::move(b));
}
Expr truncmod(Expr a, Expr b) { return ModNode::make(std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return MinNode::make(std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return MaxNode::make(std::move(a), std::move(b)); }
Expr min(Expr a, double b) { return min(a, like(a, b)); }
Expr max(Expr a, double b) { return max(a, like(a, b)); }
Expr select(Expr condition, Expr true_value, Expr false_value) {
  return SelectNode::make(std::move(condition), std::move(true_value), std::move(false_value));
}
Expr cast(DataType dtype, Expr value) {
  if (value.dtype() == dtype) return value;
  return CastNode::make(dtype, std::move(value));
}

#define DRAGON_UNARY_INTRINSIC(fn, Name) \
  Expr fn(Expr x) { return CallNode::make(Intrinsic::Name, {std::move(x)}); }
DRAGON_UNARY_INTRINSIC(exp, Exp)
DRAGON_UNARY_INTRINSIC(exp2, Exp2)
DRAGON_UNARY_INTRINSIC(expm1, Expm1)
DRAGON_UNARY_INTRINSIC(log, Log)
DRAGON_UNARY_INTRINSIC(log2, Log2)
DRAGON_UNARY_INTRINSIC(log1p, Log1p)
DRAGON_UNARY_INTRINSIC(sqrt, Sqrt)
DRAGON_UNARY_INTRINSIC(rsqrt, Rsqrt)
DRAGON_UNARY_INTRINSIC(sin, Sin)
DRAGON_UNARY_INTRINSIC(cos, Cos)
DRAGON_UNARY_INTRINSIC(tanh, Tanh)
DRAGON_UNARY_INTRINSIC(erf, Erf)
DRAGON_UNARY_INTRINSIC(floor, Floor)
DRAGON_UNARY_INTRINSIC(ceil, Ceil)
DRAGON_UNARY_INTRINSIC(round, Round)
DRAGON_UNARY_INTRINSIC(trunc, Trunc)
DRAGON_UNARY_INTRINSIC(abs, Abs)
DRAGON_UNARY_INTRINSIC(isnan, IsNan)
DRAGON_UNARY_INTRINSIC(isinf, IsInf)
#undef DRAGON_UNARY_INTRINSIC
Expr pow(Expr x, Expr y) { return CallNode::make(Intrinsic::Pow, {std::move(x), std::move(y)}); }

}  // namespace dragon::ir
