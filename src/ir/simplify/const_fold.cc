// Folding: integers are computed exactly and kept only when the result fits the type;
// floats are computed in double and rounded once to the type. For +, -, *, / and sqrt
// that equals the operation in the narrower type (double has more than twice the bits of
// f32, f16 and bf16), so folding never changes a rounding.
#include "const_fold.h"

#include <cmath>

#include "dragon/ir/op.h"
#include "interval.h"

namespace dragon::ir::simplify_detail {
namespace {

std::optional<Expr> int_result(DataType type, std::optional<int64_t> value) {
  if (!value || *value < int_min_value(type) || *value > int_max_value(type)) return std::nullopt;
  return IntImmNode::make(type, *value);
}

std::optional<Expr> fold_int(NodeKind kind, DataType type, int64_t x, int64_t y) {
  switch (kind) {
    case NodeKind::Add: return int_result(type, checked_add(x, y));
    case NodeKind::Sub: return int_result(type, checked_sub(x, y));
    case NodeKind::Mul: return int_result(type, checked_mul(x, y));
    case NodeKind::Div:
    case NodeKind::Mod:
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod: {
      if (y == 0) return std::nullopt;
      if (y == -1 && x == Interval::kNegInf) return std::nullopt;  // INT64_MIN / -1 overflows
      int64_t r = kind == NodeKind::Div        ? x / y
                  : kind == NodeKind::Mod      ? x % y
                  : kind == NodeKind::FloorDiv ? floor_div(x, y)
                                               : floor_mod(x, y);
      return int_result(type, r);
    }
    case NodeKind::Min: return IntImmNode::make(type, std::min(x, y));
    case NodeKind::Max: return IntImmNode::make(type, std::max(x, y));
    case NodeKind::EQ: return make_bool(x == y);
    case NodeKind::NE: return make_bool(x != y);
    case NodeKind::LT: return make_bool(x < y);
    case NodeKind::LE: return make_bool(x <= y);
    case NodeKind::GT: return make_bool(x > y);
    case NodeKind::GE: return make_bool(x >= y);
    case NodeKind::And: return make_bool(x != 0 && y != 0);
    case NodeKind::Or: return make_bool(x != 0 || y != 0);
    default: return std::nullopt;
  }
}

std::optional<Expr> fold_float(NodeKind kind, DataType type, double x, double y) {
  switch (kind) {
    case NodeKind::Add: return FloatImmNode::make(type, x + y);
    case NodeKind::Sub: return FloatImmNode::make(type, x - y);
    case NodeKind::Mul: return FloatImmNode::make(type, x * y);
    case NodeKind::Div: return FloatImmNode::make(type, x / y);
    case NodeKind::Min:
    case NodeKind::Max:
      // NaN operands and zeros of both signs are left to the target's min/max.
      if (std::isnan(x) || std::isnan(y) || (x == y && std::signbit(x) != std::signbit(y))) return std::nullopt;
      return FloatImmNode::make(type, kind == NodeKind::Min ? std::min(x, y) : std::max(x, y));
    case NodeKind::EQ: return make_bool(x == y);
    case NodeKind::NE: return make_bool(x != y);
    case NodeKind::LT: return make_bool(x < y);
    case NodeKind::LE: return make_bool(x <= y);
    case NodeKind::GT: return make_bool(x > y);
    case NodeKind::GE: return make_bool(x >= y);
    default: return std::nullopt;
  }
}

// Wraps `value` into the width of `type` (two's complement), as a narrowing cast does.
int64_t wrap_to(DataType type, int64_t value) {
  if (type.bits() >= 64) return value;
  uint64_t mask = (uint64_t{1} << type.bits()) - 1;
  uint64_t bits = static_cast<uint64_t>(value) & mask;
  uint64_t sign_bit = uint64_t{1} << (type.bits() - 1);
  return static_cast<int64_t>((bits ^ sign_bit) - sign_bit);
}

std::optional<double> float_unary(Intrinsic op, double x) {
  switch (op) {
    case Intrinsic::Exp: return std::exp(x);
    case Intrinsic::Exp2: return std::exp2(x);
    case Intrinsic::Expm1: return std::expm1(x);
    case Intrinsic::Log: return std::log(x);
    case Intrinsic::Log2: return std::log2(x);
    case Intrinsic::Log1p: return std::log1p(x);
    case Intrinsic::Sqrt: return std::sqrt(x);
    case Intrinsic::Rsqrt: return 1.0 / std::sqrt(x);
    case Intrinsic::Sin: return std::sin(x);
    case Intrinsic::Cos: return std::cos(x);
    case Intrinsic::Tanh: return std::tanh(x);
    case Intrinsic::Erf: return std::erf(x);
    case Intrinsic::Floor: return std::floor(x);
    case Intrinsic::Ceil: return std::ceil(x);
    case Intrinsic::Round: return std::nearbyint(x);  // half to even in the default rounding mode
    case Intrinsic::Trunc: return std::trunc(x);
    case Intrinsic::Abs: return std::fabs(x);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Expr> fold_binary(NodeKind kind, const Expr& a, const Expr& b) {
  if (!a.dtype().is_scalar()) return std::nullopt;
  if (const auto* x = a.as<IntImmNode>()) {
    if (const auto* y = b.as<IntImmNode>()) return fold_int(kind, a.dtype(), x->value, y->value);
    return std::nullopt;
  }
  if (const auto* x = a.as<FloatImmNode>()) {
    if (const auto* y = b.as<FloatImmNode>()) return fold_float(kind, a.dtype(), x->value, y->value);
  }
  return std::nullopt;
}

std::optional<Expr> fold_not(const Expr& a) {
  if (const auto* x = a.as<IntImmNode>()) return make_bool(x->value == 0);
  return std::nullopt;
}

std::optional<Expr> fold_cast(DataType type, const Expr& value) {
  if (!type.is_scalar()) return std::nullopt;
  if (const auto* x = value.as<IntImmNode>()) {
    int64_t v = x->value;
    if (type.is_bool()) return make_bool(v != 0);
    if (type.is_int()) return IntImmNode::make(type, wrap_to(type, v));
    // Exactly representable in double, so the conversion rounds once, to the target.
    if (v > (int64_t{1} << 53) || v < -(int64_t{1} << 53)) return std::nullopt;
    return FloatImmNode::make(type, static_cast<double>(v));
  }
  if (const auto* x = value.as<FloatImmNode>()) {
    double v = x->value;
    if (type.is_bool()) return make_bool(v != 0.0);
    if (type.is_float()) return FloatImmNode::make(type, v);
    // Float to int truncates; a value out of the type's range has no defined result.
    if (!std::isfinite(v)) return std::nullopt;
    double t = std::trunc(v);
    if (t < static_cast<double>(int_min_value(type)) || t >= std::ldexp(1.0, type.bits() - 1)) return std::nullopt;
    return IntImmNode::make(type, static_cast<int64_t>(t));
  }
  return std::nullopt;
}

std::optional<Expr> fold_call(Intrinsic op, const std::vector<Expr>& args) {
  if (args.empty() || !args[0].dtype().is_scalar()) return std::nullopt;
  DataType type = args[0].dtype();
  if (op == Intrinsic::Abs) {
    if (const auto* x = args[0].as<IntImmNode>()) {
      if (x->value == int_min_value(type)) return std::nullopt;  // |min| does not fit
      return IntImmNode::make(type, x->value < 0 ? -x->value : x->value);
    }
  }
  std::vector<double> values;
  for (const Expr& arg : args) {
    const auto* imm = arg.as<FloatImmNode>();
    if (imm == nullptr) return std::nullopt;
    values.push_back(imm->value);
  }
  switch (op) {
    case Intrinsic::IsNan: return make_bool(std::isnan(values[0]));
    case Intrinsic::IsInf: return make_bool(std::isinf(values[0]));
    case Intrinsic::Pow: return FloatImmNode::make(type, std::pow(values[0], values[1]));
    default: break;
  }
  std::optional<double> r = float_unary(op, values[0]);
  if (!r) return std::nullopt;
  return FloatImmNode::make(type, *r);
}

}  // namespace dragon::ir::simplify_detail
