// Math intrinsic code of the interpreter. Every float intrinsic is computed in double by
// <cmath> and rounded once to the result type: a reference, not a model of any device's
// approximate math (CUDA's __expf and friends differ in the last bits). round() is
// half-to-even (nearbyint in the default rounding mode).
#include <cmath>

#include "expr_code.h"

namespace dragon::interp::detail {
namespace {

using UnaryFn = double (*)(double);
using BinaryFn = double (*)(double, double);

double rsqrt(double x) { return 1.0 / std::sqrt(x); }
double round_half_even(double x) { return std::nearbyint(x); }
double fabs_of(double x) { return std::fabs(x); }

template <typename Format>
class FloatUnaryCall final : public ExprCode {
 public:
  FloatUnaryCall(ir::DataType dtype, UnaryFn fn, ExprPtr a) : ExprCode(dtype), fn_(fn), a_(std::move(a)) {}
  double eval_float(Frame& frame) const override { return Format::round(fn_(a_->eval_float(frame))); }

 private:
  UnaryFn fn_;
  ExprPtr a_;
};

template <typename Format>
class FloatBinaryCall final : public ExprCode {
 public:
  FloatBinaryCall(ir::DataType dtype, BinaryFn fn, ExprPtr a, ExprPtr b)
      : ExprCode(dtype), fn_(fn), a_(std::move(a)), b_(std::move(b)) {}
  double eval_float(Frame& frame) const override {
    return Format::round(fn_(a_->eval_float(frame), b_->eval_float(frame)));
  }

 private:
  BinaryFn fn_;
  ExprPtr a_, b_;
};

// |x| on integers wraps: abs of the most negative value is itself.
template <int Bits>
class IntAbs final : public ExprCode {
 public:
  IntAbs(ir::DataType dtype, ExprPtr a) : ExprCode(dtype), a_(std::move(a)) {}
  int64_t eval_int(Frame& frame) const override {
    int64_t x = a_->eval_int(frame);
    return x < 0 ? wrap_int<Bits>(static_cast<int64_t>(0 - static_cast<uint64_t>(x))) : x;
  }

 private:
  ExprPtr a_;
};

class FloatPredicate final : public ExprCode {
 public:
  FloatPredicate(bool (*fn)(double), ExprPtr a) : ExprCode(ir::DataType::boolean()), fn_(fn), a_(std::move(a)) {}
  int64_t eval_int(Frame& frame) const override { return fn_(a_->eval_float(frame)); }

 private:
  bool (*fn_)(double);
  ExprPtr a_;
};

// An effect intrinsic with nothing to do under sequential semantics: sync_threads() is a
// barrier, and one thread at a time never races. Evaluates to 0, which nobody reads.
class NoEffect final : public ExprCode {
 public:
  explicit NoEffect(ir::DataType dtype) : ExprCode(dtype) {}
  int64_t eval_int(Frame&) const override { return 0; }
};

bool is_nan(double x) { return std::isnan(x); }
bool is_inf(double x) { return std::isinf(x); }

UnaryFn unary_function(ir::Intrinsic op) {
  switch (op) {
    case ir::Intrinsic::Exp: return [](double x) { return std::exp(x); };
    case ir::Intrinsic::Exp2: return [](double x) { return std::exp2(x); };
    case ir::Intrinsic::Expm1: return [](double x) { return std::expm1(x); };
    case ir::Intrinsic::Log: return [](double x) { return std::log(x); };
    case ir::Intrinsic::Log2: return [](double x) { return std::log2(x); };
    case ir::Intrinsic::Log1p: return [](double x) { return std::log1p(x); };
    case ir::Intrinsic::Sqrt: return [](double x) { return std::sqrt(x); };
    case ir::Intrinsic::Rsqrt: return rsqrt;
    case ir::Intrinsic::Sin: return [](double x) { return std::sin(x); };
    case ir::Intrinsic::Cos: return [](double x) { return std::cos(x); };
    case ir::Intrinsic::Tanh: return [](double x) { return std::tanh(x); };
    case ir::Intrinsic::Erf: return [](double x) { return std::erf(x); };
    case ir::Intrinsic::Floor: return [](double x) { return std::floor(x); };
    case ir::Intrinsic::Ceil: return [](double x) { return std::ceil(x); };
    case ir::Intrinsic::Round: return round_half_even;
    case ir::Intrinsic::Trunc: return [](double x) { return std::trunc(x); };
    case ir::Intrinsic::Abs: return fabs_of;
    default: return nullptr;
  }
}

template <template <typename> class Node, typename... Args>
ExprPtr make_float_call(ir::DataType dtype, Args&&... args) {
  switch (float_format_of(dtype)) {
    case FloatFormat::kF64: return std::make_unique<Node<F64Format>>(dtype, std::forward<Args>(args)...);
    case FloatFormat::kF32: return std::make_unique<Node<F32Format>>(dtype, std::forward<Args>(args)...);
    case FloatFormat::kF16: return std::make_unique<Node<F16Format>>(dtype, std::forward<Args>(args)...);
    case FloatFormat::kBF16: return std::make_unique<Node<BF16Format>>(dtype, std::forward<Args>(args)...);
  }
  DRAGON_UNREACHABLE("float format");
}

}  // namespace

ExprPtr compile_call(ir::Intrinsic op, ir::DataType dtype, std::vector<ExprPtr> args) {
  DRAGON_CHECK(static_cast<int>(args.size()) == ir::intrinsic_arity(op), "{} takes {} arguments, got {}",
               ir::intrinsic_name(op), ir::intrinsic_arity(op), args.size());
  if (ir::intrinsic_is_effect(op)) return std::make_unique<NoEffect>(dtype);
  if (op == ir::Intrinsic::IsNan || op == ir::Intrinsic::IsInf) {
    DRAGON_CHECK(args[0]->dtype().is_float(), "{} of a {} value", ir::intrinsic_name(op),
                 ir::to_string(args[0]->dtype()));
    return std::make_unique<FloatPredicate>(op == ir::Intrinsic::IsNan ? is_nan : is_inf, std::move(args[0]));
  }
  if (op == ir::Intrinsic::Abs && dtype.is_int()) {
    switch (dtype.bits()) {
      case 8: return std::make_unique<IntAbs<8>>(dtype, std::move(args[0]));
      case 16: return std::make_unique<IntAbs<16>>(dtype, std::move(args[0]));
      case 32: return std::make_unique<IntAbs<32>>(dtype, std::move(args[0]));
      case 64: return std::make_unique<IntAbs<64>>(dtype, std::move(args[0]));
    }
  }
  DRAGON_CHECK(dtype.is_float(), "{} with result type {}", ir::intrinsic_name(op), ir::to_string(dtype));
  if (op == ir::Intrinsic::Pow) {
    BinaryFn pow = [](double x, double y) { return std::pow(x, y); };
    return make_float_call<FloatBinaryCall>(dtype, pow, std::move(args[0]), std::move(args[1]));
  }
  UnaryFn fn = unary_function(op);
  DRAGON_CHECK(fn != nullptr, "the interpreter has no code for intrinsic {}", ir::intrinsic_name(op));
  return make_float_call<FloatUnaryCall>(dtype, fn, std::move(args[0]));
}

}  // namespace dragon::interp::detail
