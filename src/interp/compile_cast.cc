// Cast code of the interpreter: float -> int truncates toward zero and saturates at the
// type's limits (NaN -> 0), int -> float and float -> float round to nearest even (once),
// int -> int wraps, anything -> bool is x != 0, bool -> number is 0 or 1.
#include <bit>
#include <cmath>

#include "expr_code.h"

namespace dragon::interp::detail {
namespace {

template <typename Format>
class FloatToFloat final : public ExprCode {
 public:
  FloatToFloat(ir::DataType dtype, ExprPtr value) : ExprCode(dtype), value_(std::move(value)) {}
  double eval_float(Frame& frame) const override { return Format::round(value_->eval_float(frame)); }

 private:
  ExprPtr value_;
};

// An int64 as a double rounded to odd at 53 bits: rounding that once more to 24 or fewer
// bits gives the correctly rounded result (no double-rounding error).
double int_to_double_round_to_odd(int64_t x) {
  uint64_t magnitude = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  if (magnitude < (uint64_t{1} << 53)) return static_cast<double>(x);
  int shift = std::bit_width(magnitude) - 53;
  uint64_t kept = magnitude >> shift;
  if ((magnitude & ((uint64_t{1} << shift) - 1)) != 0) kept |= 1;
  double result = std::ldexp(static_cast<double>(kept), shift);
  return x < 0 ? -result : result;
}

template <typename Format>
class IntToFloat final : public ExprCode {
 public:
  IntToFloat(ir::DataType dtype, ExprPtr value) : ExprCode(dtype), value_(std::move(value)) {}
  double eval_float(Frame& frame) const override {
    int64_t x = value_->eval_int(frame);
    if constexpr (std::is_same_v<Format, F64Format>) {
      return static_cast<double>(x);
    } else if constexpr (std::is_same_v<Format, F32Format>) {
      return static_cast<double>(static_cast<float>(x));
    } else {
      return Format::round(int_to_double_round_to_odd(x));
    }
  }

 private:
  ExprPtr value_;
};

template <int Bits>
class FloatToInt final : public ExprCode {
 public:
  FloatToInt(ir::DataType dtype, ExprPtr value) : ExprCode(dtype), value_(std::move(value)) {}
  int64_t eval_int(Frame& frame) const override {
    double x = value_->eval_float(frame);
    if (x != x) return 0;
    // -2^(Bits-1) and 2^(Bits-1) are exact doubles; the limits themselves may not be.
    constexpr double kLimit = static_cast<double>(uint64_t{1} << (Bits - 1));
    if (x <= -kLimit) return Bits == 64 ? INT64_MIN : -(int64_t{1} << (Bits - 1));
    if (x >= kLimit) return Bits == 64 ? INT64_MAX : (int64_t{1} << (Bits - 1)) - 1;
    return static_cast<int64_t>(x);  // truncates toward zero
  }

 private:
  ExprPtr value_;
};

template <int Bits>
class IntToInt final : public ExprCode {
 public:
  IntToInt(ir::DataType dtype, ExprPtr value) : ExprCode(dtype), value_(std::move(value)) {}
  int64_t eval_int(Frame& frame) const override { return wrap_int<Bits>(value_->eval_int(frame)); }

 private:
  ExprPtr value_;
};

class FloatToBool final : public ExprCode {
 public:
  explicit FloatToBool(ExprPtr value) : ExprCode(ir::DataType::boolean()), value_(std::move(value)) {}
  int64_t eval_int(Frame& frame) const override { return value_->eval_float(frame) != 0; }

 private:
  ExprPtr value_;
};

class IntToBool final : public ExprCode {
 public:
  explicit IntToBool(ExprPtr value) : ExprCode(ir::DataType::boolean()), value_(std::move(value)) {}
  int64_t eval_int(Frame& frame) const override { return value_->eval_int(frame) != 0; }

 private:
  ExprPtr value_;
};

template <template <typename> class Node>
ExprPtr make_float_target(ir::DataType dtype, ExprPtr value) {
  switch (float_format_of(dtype)) {
    case FloatFormat::kF64: return std::make_unique<Node<F64Format>>(dtype, std::move(value));
    case FloatFormat::kF32: return std::make_unique<Node<F32Format>>(dtype, std::move(value));
    case FloatFormat::kF16: return std::make_unique<Node<F16Format>>(dtype, std::move(value));
    case FloatFormat::kBF16: return std::make_unique<Node<BF16Format>>(dtype, std::move(value));
  }
  DRAGON_UNREACHABLE("float format");
}

template <template <int> class Node>
ExprPtr make_int_target(ir::DataType dtype, ExprPtr value) {
  switch (dtype.bits()) {
    case 8: return std::make_unique<Node<8>>(dtype, std::move(value));
    case 16: return std::make_unique<Node<16>>(dtype, std::move(value));
    case 32: return std::make_unique<Node<32>>(dtype, std::move(value));
    case 64: return std::make_unique<Node<64>>(dtype, std::move(value));
  }
  DRAGON_UNREACHABLE("int of {} bits", dtype.bits());
}

}  // namespace

ExprPtr compile_cast(ir::DataType dtype, ExprPtr value) {
  ir::DataType from = value->dtype();
  if (dtype.is_bool()) {
    if (from.is_float()) return std::make_unique<FloatToBool>(std::move(value));
    return std::make_unique<IntToBool>(std::move(value));
  }
  if (dtype.is_float()) {
    if (from.is_float()) return make_float_target<FloatToFloat>(dtype, std::move(value));
    return make_float_target<IntToFloat>(dtype, std::move(value));  // bool is 0 or 1
  }
  DRAGON_CHECK(dtype.is_int(), "cast to {}", ir::to_string(dtype));
  if (from.is_float()) return make_int_target<FloatToInt>(dtype, std::move(value));
  return make_int_target<IntToInt>(dtype, std::move(value));
}

}  // namespace dragon::interp::detail
