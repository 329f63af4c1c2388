// Activation ops against plain double-precision references written here (not the
// interpreter's math), plus parameter errors and the KernelBench mapping file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "dragon/ir/stmt.h"
#include "dragon/support/error.h"
#include "unit/ops/op_test_util.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {

using interp::Distribution;
using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::to_doubles;
using testing::user_error_of;
using testing::Tolerance;

using ScalarRef = std::function<double(double)>;

// Tolerances per element type: f32 results come from a handful of f32 operations; f16
// and bf16 results are rounded once from f32 (half an ulp: 2^-11 and 2^-8 relative).
constexpr Tolerance kActivationF32{1e-5, 1e-6};
constexpr Tolerance kActivationF16{1e-3, 1e-5};
constexpr Tolerance kActivationBF16{8e-3, 1e-5};

void expect_elementwise(const std::string& spec, const ScalarRef& ref, Tolerance tol = kActivationF32,
                        Distribution distribution = Distribution::kNormal, uint64_t seed = 1) {
  SCOPED_TRACE(spec);
  OpRun run = run_op(spec, seed, distribution);
  std::vector<double> x = to_doubles(run.arg(0));
  std::vector<double> expected(x.size());
  std::transform(x.begin(), x.end(), expected.begin(), ref);
  EXPECT_EQ(run.output().shape(), run.arg(0).shape());
  EXPECT_TRUE(all_close(run.output(), expected, tol.rtol, tol.atol));
}

// Every distribution the generator has: ordinary values, large offsets and the edge mix
// (zeros of both signs, +-1, tiny and +-1000).
void expect_elementwise_all(const std::string& spec, const ScalarRef& ref) {
  for (Distribution d : {Distribution::kNormal, Distribution::kUniform, Distribution::kOffset, Distribution::kEdge}) {
    SCOPED_TRACE(std::string(interp::distribution_name(d)));
    expect_elementwise(spec, ref, kActivationF32, d);
  }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}

TEST(ActivationOps, Relu) {
  expect_elementwise_all("relu:shape=7x13", [](double x) { return x > 0 ? x : 0.0; });
  expect_elementwise("relu:shape=3x5x7", [](double x) { return x > 0 ? x : 0.0; });
  expect_elementwise("relu:shape=7x13,dtype=f16", [](double x) { return x > 0 ? x : 0.0; }, {0, 0});
}

TEST(ActivationOps, LeakyReluUsesItsSlope) {
  expect_elementwise_all("leaky_relu:shape=7x13", [](double x) { return x > 0 ? x : 0.01 * x; });
  expect_elementwise("leaky_relu:shape=13,negative_slope=0.25", [](double x) { return x > 0 ? x : 0.25 * x; });
}

TEST(ActivationOps, Sigmoid) {
  expect_elementwise_all("sigmoid:shape=7x13", sigmoid);
  expect_elementwise("sigmoid:shape=7x13,dtype=f16", sigmoid, kActivationF16);
  expect_elementwise("sigmoid:shape=7x13,dtype=bf16", sigmoid, kActivationBF16);
}

TEST(ActivationOps, Tanh) {
  expect_elementwise_all("tanh:shape=7x13", [](double x) { return std::tanh(x); });
  expect_elementwise("tanh:shape=7x13,dtype=f64", [](double x) { return std::tanh(x); }, {1e-12, 1e-14});
}

TEST(ActivationOps, Swish) {
  expect_elementwise_all("swish:shape=7x13", [](double x) { return x * sigmoid(x); });
}

TEST(ActivationOps, GeluExactUsesErf) {
  expect_elementwise_all("gelu:shape=7x13", gelu);
  expect_elementwise("gelu:shape=7x13,dtype=f16", gelu, kActivationF16);
  expect_elementwise("gelu:shape=7x13,dtype=bf16", gelu, kActivationBF16);
}

TEST(ActivationOps, GeluTanhApproximationMatchesMinGPT) {
  expect_elementwise_all("gelu:shape=7x13,approximate=tanh", gelu_tanh);
  // The two forms differ by up to about 5e-4 near |x| = 2: the op must not mix them up.
  OpRun exact = run_op("gelu:shape=7x13,approximate=none", 3, Distribution::kNormal);
  OpRun approx = run_op("gelu:shape=7x13,approximate=tanh", 3, Distribution::kNormal);
  std::vector<double> a = to_doubles(exact.output()), b = to_doubles(approx.output());
  double max_difference = 0;
  for (size_t i = 0; i < a.size(); ++i) max_difference = std::max(max_difference, std::fabs(a[i] - b[i]));
  EXPECT_GT(max_difference, 1e-5);
}

TEST(ActivationOps, SeluUsesTorchConstants) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  expect_elementwise_all("selu:shape=7x13",
                         [&](double x) { return x > 0 ? kScale * x : kScale * kAlpha * (std::exp(x) - 1.0); });
}

TEST(ActivationOps, HardSigmoid) {
  // Written as a clamp of x/6 + 1/2, the other spelling of torch's relu6(x + 3) / 6.
  expect_elementwise_all("hardsigmoid:shape=7x13",
                         [](double x) { return std::clamp(x / 6.0 + 0.5, 0.0, 1.0); });
}

TEST(ActivationOps, HardSwish) {
  // MobileNetV3's x * relu6(x + 3) / 6: zero below -3, the identity above 3, a parabola between.
  expect_elementwise_all("hardswish:shape=7x13", [](double x) { return x * std::clamp(x + 3.0, 0.0, 6.0) / 6.0; });
}

TEST(ActivationOps, SoftplusIsLinearAboveTheThreshold) {
  auto softplus = [](double beta, double threshold) {
    return [=](double x) { return beta * x > threshold ? x : std::log(1.0 + std::exp(beta * x)) / beta; };
  };
  expect_elementwise_all("softplus:shape=7x13", softplus(1.0, 20.0));
  // A low threshold puts many normal inputs on the linear side; beta scales the rest.
  expect_elementwise("softplus:shape=7x13,beta=2,threshold=1", softplus(2.0, 1.0));
  expect_elementwise("softplus:shape=7x13,beta=0.5,threshold=0.25", softplus(0.5, 0.25), kActivationF32, Distribution::kUniform);
}

TEST(ActivationOps, Softsign) {
  expect_elementwise_all("softsign:shape=7x13", [](double x) { return x / (1.0 + std::fabs(x)); });
}

TEST(ActivationOps, EluUsesAlpha) {
  expect_elementwise_all("elu:shape=7x13", [](double x) { return x > 0 ? x : std::exp(x) - 1.0; });
  expect_elementwise("elu:shape=7x13,alpha=0.3", [](double x) { return x > 0 ? x : 0.3 * (std::exp(x) - 1.0); });
}

TEST(ActivationOps, HardTanhClampsToItsBounds) {
  expect_elementwise_all("hardtanh:shape=7x13", [](double x) { return std::clamp(x, -1.0, 1.0); });
  expect_elementwise("hardtanh:shape=7x13,min_val=-0.25,max_val=2",
                     [](double x) { return std::clamp(x, -0.25, 2.0); });
}

// Softmax references: rows along `axis` of a row-major tensor of `shape`.
struct Rows {
  std::vector<int64_t> shape;
  int axis;
  int64_t outer() const {
    int64_t n = 1;
    for (int d = 0; d < axis; ++d) n *= shape[d];
    return n;
  }
  int64_t inner() const {
    int64_t n = 1;
    for (size_t d = axis + 1; d < shape.size(); ++d) n *= shape[d];
    return n;
  }
  int64_t length() const { return shape[axis]; }
  int64_t at(int64_t o, int64_t k, int64_t in) const { return (o * length() + k) * inner() + in; }
};

std::vector<double> softmax_ref(const std::vector<double>& x, const Rows& rows, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < rows.outer(); ++o) {
    for (int64_t in = 0; in < rows.inner(); ++in) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < rows.length(); ++k) mx = std::max(mx, x[rows.at(o, k, in)]);
      double sum = 0;
      for (int64_t k = 0; k < rows.length(); ++k) sum += std::exp(x[rows.at(o, k, in)] - mx);
      for (int64_t k = 0; k < rows.length(); ++k) {
        double v = x[rows.at(o, k, in)];
        y[rows.at(o, k, in)] = log ? v - mx - std::log(sum) : std::exp(v - mx) / sum;
      }
    }
  }
  return y;
}

void expect_softmax(const std::string& spec, const Rows& rows, bool log, Tolerance tol,
                    Distribution distribution = Distribution::kNormal) {
  SCOPED_TRACE(spec + " " + std::string(interp::distribution_name(distribution)));
  OpRun run = run_op(spec, 2, distribution);
  EXPECT_EQ(run.output().shape(), rows.shape);
  EXPECT_TRUE(all_close(run.output(), softmax_ref(to_doubles(run.arg(0)), rows, log), tol.rtol, tol.atol));
}

TEST(ActivationOps, SoftmaxOverEachAxis) {
  for (Distribution d : {Distribution::kNormal, Distribution::kEdge}) {
    expect_softmax("softmax:shape=7x13", {{7, 13}, 1}, false, {1e-5, 1e-9}, d);
    expect_softmax("softmax:shape=7x13,axis=0", {{7, 13}, 0}, false, {1e-5, 1e-9}, d);
    expect_softmax("softmax:shape=3x5x7,axis=1", {{3, 5, 7}, 1}, false, {1e-5, 1e-9}, d);
    expect_softmax("softmax:shape=3x5x7,axis=-1", {{3, 5, 7}, 2}, false, {1e-5, 1e-9}, d);
  }
}

// Inputs near 100 overflow exp in f32 unless the row maximum is subtracted first.
TEST(ActivationOps, SoftmaxSubtractsTheRowMaximum) {
  expect_softmax("softmax:shape=7x13", {{7, 13}, 1}, false, {1e-5, 1e-9}, Distribution::kOffset);
  expect_softmax("log_softmax:shape=7x13", {{7, 13}, 1}, true, {1e-5, 1e-5}, Distribution::kOffset);
}

TEST(ActivationOps, SoftmaxHalfPrecisionKeepsStatisticsInF32) {
  expect_softmax("softmax:shape=7x13,dtype=f16", {{7, 13}, 1}, false, {1e-3, 1e-6});
  expect_softmax("softmax:shape=7x13,dtype=bf16", {{7, 13}, 1}, false, {8e-3, 1e-6});
  expect_softmax("log_softmax:shape=5x301,dtype=f16", {{5, 301}, 1}, true, {1e-3, 1e-3});
}

TEST(ActivationOps, LogSoftmaxOverEachAxis) {
  for (Distribution d : {Distribution::kNormal, Distribution::kEdge}) {
    expect_softmax("log_softmax:shape=7x13", {{7, 13}, 1}, true, {1e-5, 1e-5}, d);
    expect_softmax("log_softmax:shape=7x13,axis=0", {{7, 13}, 0}, true, {1e-5, 1e-5}, d);
    expect_softmax("log_softmax:shape=3x5x7,axis=-2", {{3, 5, 7}, 1}, true, {1e-5, 1e-5}, d);
  }
}

// The unscheduled softmax is max, exp, exp-sum and normalise stages, in that order.
TEST(ActivationOps, SoftmaxIsWrittenAsSeparateStages) {
  Workload w = OpRegistry::global().make_workload("softmax:shape=7x13");
  const auto* seq = w.func.root_block()->body.as<ir::SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  std::vector<std::string> names;
  for (const ir::Stmt& nest : seq->seq) {
    ir::Stmt s = nest;
    while (const auto* loop = s.as<ir::ForNode>()) s = loop->body;
    const auto* realize = s.as<ir::BlockRealizeNode>();
    ASSERT_NE(realize, nullptr);
    names.push_back(realize->block->name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"x_max", "x_exp", "exp_sum", "softmax"}));
}

TEST(ActivationOps, BadParametersAreUserErrorsNamingTheParameter) {
  EXPECT_NE(user_error_of("softmax:shape=7x13,axis=2").find("parameter axis"), std::string::npos);
  EXPECT_NE(user_error_of("log_softmax:shape=7x13,axis=-3").find("parameter axis"), std::string::npos);
  EXPECT_NE(user_error_of("hardtanh:min_val=2,max_val=1").find("parameter min_val"), std::string::npos);
  EXPECT_NE(user_error_of("softplus:beta=0").find("parameter beta"), std::string::npos);
  EXPECT_NE(user_error_of("gelu:approximate=erf").find("approximate"), std::string::npos);
  EXPECT_NE(user_error_of("relu:shape=7x0").find("shape"), std::string::npos);
}

TEST(ActivationOps, EveryOpRunsWithItsDefaults) {
  int ops = 0;
  for (const OpKind& op : OpRegistry::global().kinds()) {
    if (op.category != "activation") continue;
    SCOPED_TRACE(op.name);
    OpRun run = run_op(op.name);
    std::vector<double> y = to_doubles(run.output());
    EXPECT_TRUE(std::none_of(y.begin(), y.end(), [](double v) { return std::isnan(v); }));
    ++ops;
  }
  EXPECT_EQ(ops, 15);  // 13 elementwise ops, softmax and log_softmax
}

}  // namespace
}  // namespace dragon::ops
