// Expression semantics of the interpreter: rounding after every operation in each float
// type, integer wrap-around, truncating and flooring division, casts with saturation,
// lazy select and short-circuit logic, NaN rules, math intrinsics.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "dragon/support/error.h"
#include "dragon/support/half.h"
#include "interp_test_util.h"

namespace dragon::interp {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace): the test helpers
using ir::DataType;
using ir::Expr;
using tensor::HostTensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Evaluates expressions over rank-0 input buffers, so nothing is a compile-time constant.
class ExprHarness {
 public:
  // A rank-0 input of `dtype` holding `value`, as a load.
  Expr arg(DataType dtype, double value) {
    ir::Buffer buffer = ir::Buffer::make("x" + std::to_string(buffers_.size()), dtype, {});
    buffers_.push_back(buffer);
    HostTensor t(dtype, {});
    t.set(0, value);
    values_.push_back(t);
    return ir::BufferLoadNode::make(buffer, {});
  }
  Expr int_arg(DataType dtype, int64_t value) {
    Expr e = arg(dtype, 0);
    values_.back().set_int(0, value);
    return e;
  }
  // A rank-1 input of `n` f32 zeros, for out-of-bounds probes.
  ir::Buffer vector_arg(int64_t n) {
    ir::Buffer buffer = ir::Buffer::make("v" + std::to_string(buffers_.size()), DataType::f32(), {n});
    buffers_.push_back(buffer);
    values_.emplace_back(DataType::f32(), std::vector<int64_t>{n});
    return buffer;
  }

  HostTensor eval(const Expr& e) {
    ir::Buffer out = ir::Buffer::make("Out", e.dtype(), {});
    std::vector<ir::Param> params;
    for (const ir::Buffer& b : buffers_) params.push_back(input(b));
    params.push_back(output(out));
    std::vector<HostTensor> args = values_;
    args.emplace_back(e.dtype(), std::vector<int64_t>{});
    run(make_func(params, ir::BufferStoreNode::make(out, e, {})), args);
    return args.back();
  }
  double f(const Expr& e) { return eval(e).get(0); }
  int64_t i(const Expr& e) { return eval(e).get_int(0); }

 private:
  std::vector<ir::Buffer> buffers_;
  std::vector<HostTensor> values_;
};

// 1 + 2^-11 is halfway between 1 and the next f16; ties to even give 1, twice. Computing
// (1 + e) + e in wider precision first would give 1 + 2^-10 instead.
TEST(InterpreterExprTest, F16RoundsAfterEveryOperation) {
  ExprHarness h;
  Expr one = h.arg(DataType::f16(), 1), e = h.arg(DataType::f16(), std::ldexp(1.0, -11));
  EXPECT_EQ(h.f(one + e), 1.0);
  EXPECT_EQ(h.f((one + e) + e), 1.0);
  EXPECT_EQ(h.f(e + e + one), 1.0 + std::ldexp(1.0, -10));
  Expr big = h.arg(DataType::f16(), 300);
  EXPECT_EQ(h.f(big * big), kInf);  // 90000 > 65504
  Expr three = h.arg(DataType::f16(), 3);
  EXPECT_EQ(h.f(one / three), round_to_f16(1.0 / 3.0));
}

TEST(InterpreterExprTest, BF16RoundsAfterEveryOperation) {
  ExprHarness h;
  Expr one = h.arg(DataType::bf16(), 1), e = h.arg(DataType::bf16(), std::ldexp(1.0, -8));
  EXPECT_EQ(h.f((one + e) + e), 1.0);
  EXPECT_EQ(h.f(e + e + one), 1.0 + std::ldexp(1.0, -7));
  Expr three = h.arg(DataType::bf16(), 3);
  EXPECT_EQ(h.f(one / three), round_to_bf16(1.0 / 3.0));
}

TEST(InterpreterExprTest, F32AndF64KeepTheirOwnPrecision) {
  ExprHarness h;
  Expr one = h.arg(DataType::f32(), 1), e = h.arg(DataType::f32(), std::ldexp(1.0, -24));
  EXPECT_EQ(h.f((one + e) + e), 1.0);
  Expr tenth = h.arg(DataType::f32(), 0.1), three = h.arg(DataType::f32(), 3);
  EXPECT_EQ(h.f(tenth * three), static_cast<double>(0.1f * 3.0f));
  Expr one64 = h.arg(DataType::f64(), 1), e64 = h.arg(DataType::f64(), std::ldexp(1.0, -24));
  EXPECT_EQ(h.f((one64 + e64) + e64), 1.0 + std::ldexp(1.0, -23));
}

TEST(InterpreterExprTest, IntegersWrapInTheirWidth) {
  ExprHarness h;
  Expr i32_max = h.int_arg(DataType::i32(), INT32_MAX), i32_one = h.int_arg(DataType::i32(), 1);
  EXPECT_EQ(h.i(i32_max + i32_one), INT32_MIN);
  Expr i32_min = h.int_arg(DataType::i32(), INT32_MIN);
  EXPECT_EQ(h.i(i32_min - i32_one), INT32_MAX);
  Expr big = h.int_arg(DataType::i32(), 65536);
  EXPECT_EQ(h.i(big * big), 0);
  Expr i8 = h.int_arg(DataType::i8(), 100);
  EXPECT_EQ(h.i(i8 + i8), -56);
  Expr i64_max = h.int_arg(DataType::i64(), INT64_MAX), i64_one = h.int_arg(DataType::i64(), 1);
  EXPECT_EQ(h.i(i64_max + i64_one), INT64_MIN);
}

int64_t floor_div_ref(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TEST(InterpreterExprTest, TruncatingAndFlooringDivision) {
  const int64_t pairs[][2] = {{7, 2}, {-7, 2}, {7, -2}, {-7, -2}, {6, 3}, {-6, 3}, {0, -5}, {1, 7}, {-1, 7}};
  for (DataType t : {DataType::i32(), DataType::i64(), DataType::i8()}) {
    for (const auto& p : pairs) {
      ExprHarness h;
      Expr a = h.int_arg(t, p[0]), b = h.int_arg(t, p[1]);
      EXPECT_EQ(h.i(ir::truncdiv(a, b)), p[0] / p[1]) << p[0] << " div " << p[1];
      EXPECT_EQ(h.i(ir::truncmod(a, b)), p[0] % p[1]) << p[0] << " mod " << p[1];
      EXPECT_EQ(h.i(ir::floordiv(a, b)), floor_div_ref(p[0], p[1])) << p[0] << " floordiv " << p[1];
      EXPECT_EQ(h.i(ir::floormod(a, b)), p[0] - floor_div_ref(p[0], p[1]) * p[1]) << p[0] << " floormod " << p[1];
    }
  }
  // The one overflowing quotient wraps, as two's complement hardware gives.
  ExprHarness h;
  Expr min32 = h.int_arg(DataType::i32(), INT32_MIN), m1 = h.int_arg(DataType::i32(), -1);
  EXPECT_EQ(h.i(ir::truncdiv(min32, m1)), INT32_MIN);
  EXPECT_EQ(h.i(ir::floormod(min32, m1)), 0);
  Expr min64 = h.int_arg(DataType::i64(), INT64_MIN), m64 = h.int_arg(DataType::i64(), -1);
  EXPECT_EQ(h.i(ir::floordiv(min64, m64)), INT64_MIN);
  EXPECT_EQ(h.i(ir::truncmod(min64, m64)), 0);
}

TEST(InterpreterExprTest, IntegerDivisionByZeroIsAUserError) {
  ExprHarness h;
  Expr a = h.int_arg(DataType::i32(), 5), zero = h.int_arg(DataType::i32(), 0);
  for (Expr e : {ir::truncdiv(a, zero), ir::truncmod(a, zero), ir::floordiv(a, zero), ir::floormod(a, zero)}) {
    try {
      h.eval(e);
      ADD_FAILURE() << "expected a UserError";
    } catch (const UserError& error) {
      std::string message = error.what();
      EXPECT_NE(message.find("division by zero"), std::string::npos) << message;
      EXPECT_NE(message.find("BufferStore to Out"), std::string::npos) << message;
    }
  }
}

TEST(InterpreterExprTest, FloatDivisionByZeroIsIEEE) {
  ExprHarness h;
  Expr one = h.arg(DataType::f32(), 1), zero = h.arg(DataType::f32(), 0);
  EXPECT_EQ(h.f(one / zero), kInf);
  EXPECT_TRUE(std::isnan(h.f(zero / zero)));
}

TEST(InterpreterExprTest, SelectEvaluatesOnlyTheChosenBranch) {
  ExprHarness h;
  ir::Buffer v = h.vector_arg(4);
  Expr yes = h.arg(DataType::boolean(), 1), no = h.arg(DataType::boolean(), 0);
  Expr in_bounds = ir::BufferLoadNode::make(v, {3}) + 5.0f;
  Expr out_of_bounds = ir::BufferLoadNode::make(v, {100});
  EXPECT_EQ(h.f(ir::select(yes, in_bounds, out_of_bounds)), 5.0);
  EXPECT_EQ(h.f(ir::select(no, out_of_bounds, in_bounds)), 5.0);
  EXPECT_THROW(h.f(ir::select(no, in_bounds, out_of_bounds)), UserError);
}

TEST(InterpreterExprTest, AndOrShortCircuit) {
  ExprHarness h;
  ir::Buffer v = h.vector_arg(2);
  Expr yes = h.arg(DataType::boolean(), 1), no = h.arg(DataType::boolean(), 0);
  Expr out_of_bounds = ir::BufferLoadNode::make(v, {9}) > 0.0f;
  EXPECT_EQ(h.i(no && out_of_bounds), 0);
  EXPECT_EQ(h.i(yes || out_of_bounds), 1);
  EXPECT_THROW(h.i(yes && out_of_bounds), UserError);
  EXPECT_EQ(h.i(!no), 1);
  EXPECT_EQ(h.i(yes && !no), 1);
}

TEST(InterpreterExprTest, ComparisonsWithNaNAreFalseExceptNotEqual) {
  ExprHarness h;
  Expr nan = h.arg(DataType::f32(), kNaN), one = h.arg(DataType::f32(), 1);
  EXPECT_EQ(h.i(nan < one), 0);
  EXPECT_EQ(h.i(nan >= one), 0);
  EXPECT_EQ(h.i(ir::eq(nan, nan)), 0);
  EXPECT_EQ(h.i(ir::ne(nan, nan)), 1);
  EXPECT_EQ(h.i(one <= one), 1);
  Expr a = h.int_arg(DataType::i64(), -3), b = h.int_arg(DataType::i64(), 2);
  EXPECT_EQ(h.i(a < b), 1);
  EXPECT_EQ(h.i(a > b), 0);
}

// CUDA fminf / fmaxf: a NaN operand gives the other operand.
TEST(InterpreterExprTest, MinMaxFollowCudaNaNRules) {
  ExprHarness h;
  Expr nan = h.arg(DataType::f32(), kNaN), one = h.arg(DataType::f32(), 1), two = h.arg(DataType::f32(), 2);
  EXPECT_EQ(h.f(ir::min(nan, one)), 1.0);
  EXPECT_EQ(h.f(ir::max(one, nan)), 1.0);
  EXPECT_TRUE(std::isnan(h.f(ir::min(nan, nan))));
  EXPECT_EQ(h.f(ir::min(two, one)), 1.0);
  EXPECT_EQ(h.f(ir::max(two, one)), 2.0);
  Expr a = h.int_arg(DataType::i32(), -4), b = h.int_arg(DataType::i32(), 3);
  EXPECT_EQ(h.i(ir::min(a, b)), -4);
  EXPECT_EQ(h.i(ir::max(a, b)), 3);
}

TEST(InterpreterExprTest, FloatToIntTruncatesAndSaturates) {
  struct Case {
    double value;
    DataType type;
    int64_t expected;
  };
  const Case cases[] = {
      {3.9, DataType::i32(), 3},
      {-3.9, DataType::i32(), -3},
      {1e10, DataType::i32(), INT32_MAX},
      {-1e10, DataType::i32(), INT32_MIN},
      {kNaN, DataType::i32(), 0},
      {kInf, DataType::i64(), INT64_MAX},
      {-kInf, DataType::i64(), INT64_MIN},
      {300.5, DataType::i8(), 127},
      {-300, DataType::i8(), -128},
      {2147483647.0, DataType::i32(), INT32_MAX},
      {9.3e18, DataType::i64(), INT64_MAX},
  };
  for (const Case& c : cases) {
    ExprHarness h;
    Expr x = h.arg(DataType::f64(), c.value);
    EXPECT_EQ(h.i(ir::cast(c.type, x)), c.expected) << c.value << " to " << ir::to_string(c.type);
  }
}

TEST(InterpreterExprTest, IntToFloatRoundsToNearestEvenOnce) {
  ExprHarness h;
  EXPECT_EQ(h.f(ir::cast(DataType::f16(), h.int_arg(DataType::i32(), 2049))), 2048.0);
  EXPECT_EQ(h.f(ir::cast(DataType::f16(), h.int_arg(DataType::i32(), 2051))), 2052.0);
  EXPECT_EQ(h.f(ir::cast(DataType::f32(), h.int_arg(DataType::i32(), 16777217))), 16777216.0);
  EXPECT_EQ(h.f(ir::cast(DataType::f64(), h.int_arg(DataType::i64(), (int64_t{1} << 53) + 1))), std::ldexp(1.0, 53));
  // 2^62 + 2^54 + 1 is just above halfway between two bf16 values; through a double it
  // would become exactly halfway and round down to even.
  int64_t above_halfway = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  EXPECT_EQ(h.f(ir::cast(DataType::bf16(), h.int_arg(DataType::i64(), above_halfway))),
            std::ldexp(1.0, 62) + std::ldexp(1.0, 55));
  EXPECT_EQ(h.f(ir::cast(DataType::f32(), h.int_arg(DataType::i64(), above_halfway))),
            static_cast<double>(static_cast<float>(above_halfway)));
}

TEST(InterpreterExprTest, IntToIntWrapsAndBoolIsNonZero) {
  ExprHarness h;
  EXPECT_EQ(h.i(ir::cast(DataType::i8(), h.int_arg(DataType::i32(), 300))), 44);
  EXPECT_EQ(h.i(ir::cast(DataType::i8(), h.int_arg(DataType::i32(), -129))), 127);
  EXPECT_EQ(h.i(ir::cast(DataType::i32(), h.int_arg(DataType::i64(), (int64_t{1} << 32) + 5))), 5);
  EXPECT_EQ(h.i(ir::cast(DataType::boolean(), h.int_arg(DataType::i32(), 2))), 1);
  EXPECT_EQ(h.i(ir::cast(DataType::boolean(), h.int_arg(DataType::i32(), 0))), 0);
  EXPECT_EQ(h.i(ir::cast(DataType::boolean(), h.arg(DataType::f32(), 0.5))), 1);
  EXPECT_EQ(h.i(ir::cast(DataType::boolean(), h.arg(DataType::f32(), -0.0))), 0);
  EXPECT_EQ(h.i(ir::cast(DataType::boolean(), h.arg(DataType::f32(), kNaN))), 1);
  EXPECT_EQ(h.f(ir::cast(DataType::f32(), h.arg(DataType::boolean(), 1))), 1.0);
  EXPECT_EQ(h.i(ir::cast(DataType::i32(), h.arg(DataType::boolean(), 1))), 1);
}

TEST(InterpreterExprTest, FloatToFloatRoundsOnce) {
  ExprHarness h;
  EXPECT_EQ(h.f(ir::cast(DataType::f16(), h.arg(DataType::f32(), 65520))), kInf);
  EXPECT_EQ(h.f(ir::cast(DataType::f16(), h.arg(DataType::f32(), 1 + std::ldexp(1.0, -11)))), 1.0);
  // 1 + 2^-11 + 2^-30 is above halfway in f16; rounding through f32 would first make it
  // exactly halfway (2^-30 is below f32's precision at 1) and then round down.
  EXPECT_EQ(h.f(ir::cast(DataType::f16(), h.arg(DataType::f64(), 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)))),
            1 + std::ldexp(1.0, -10));
  EXPECT_EQ(h.f(ir::cast(DataType::f32(), h.arg(DataType::f16(), 0.333251953125))), 0.333251953125);
}

// Intrinsics compute in double and round once to the result type.
TEST(InterpreterExprTest, MathIntrinsics) {
  ExprHarness h;
  EXPECT_EQ(h.f(ir::exp(h.arg(DataType::f32(), 1))), static_cast<double>(static_cast<float>(std::exp(1.0))));
  EXPECT_EQ(h.f(ir::sqrt(h.arg(DataType::f16(), 2))), round_to_f16(std::sqrt(2.0)));
  EXPECT_EQ(h.f(ir::log(h.arg(DataType::bf16(), 3))), round_to_bf16(std::log(3.0)));
  EXPECT_EQ(h.f(ir::rsqrt(h.arg(DataType::f32(), 4))), 0.5);
  EXPECT_EQ(h.f(ir::pow(h.arg(DataType::f32(), 2), h.arg(DataType::f32(), 10))), 1024.0);
  EXPECT_EQ(h.f(ir::tanh(h.arg(DataType::f64(), 0.5))), std::tanh(0.5));
  EXPECT_EQ(h.f(ir::round(h.arg(DataType::f32(), 2.5))), 2.0);
  EXPECT_EQ(h.f(ir::round(h.arg(DataType::f32(), 3.5))), 4.0);
  EXPECT_EQ(h.f(ir::round(h.arg(DataType::f32(), -2.5))), -2.0);
  EXPECT_EQ(h.f(ir::floor(h.arg(DataType::f32(), -1.5))), -2.0);
  EXPECT_EQ(h.f(ir::ceil(h.arg(DataType::f32(), -1.5))), -1.0);
  EXPECT_EQ(h.f(ir::trunc(h.arg(DataType::f32(), -1.5))), -1.0);
  EXPECT_EQ(h.f(ir::abs(h.arg(DataType::f32(), -0.25))), 0.25);
  EXPECT_EQ(h.i(ir::abs(h.int_arg(DataType::i32(), -7))), 7);
  EXPECT_EQ(h.i(ir::abs(h.int_arg(DataType::i32(), INT32_MIN))), INT32_MIN);
  EXPECT_EQ(h.i(ir::isnan(h.arg(DataType::f16(), kNaN))), 1);
  EXPECT_EQ(h.i(ir::isnan(h.arg(DataType::f16(), 1))), 0);
  EXPECT_EQ(h.i(ir::isinf(h.arg(DataType::f32(), -kInf))), 1);
  EXPECT_EQ(h.f(ir::exp(h.arg(DataType::f16(), 20))), kInf);  // e^20 > 65504
}

TEST(InterpreterExprTest, ImmediatesAndArithmeticMix) {
  ExprHarness h;
  Expr x = h.arg(DataType::f32(), 1.5);
  EXPECT_EQ(h.f(x * 2.0 - 1.0), 2.0);
  Expr n = h.int_arg(DataType::i64(), 10);
  EXPECT_EQ(h.i(n * int64_t{3} - int64_t{4}), 26);
}

}  // namespace
}  // namespace dragon::interp
