// Normalisation ops against plain double-precision references written here (two-pass
// statistics in double, not the interpreter's), plus parameter errors and the
// KernelBench mapping file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
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

using Index = std::vector<int64_t>;

// f32 on N(0, 1) data: short f32 sums, so errors of a few ulp of the O(1) results.
constexpr Tolerance kNormF32{1e-5, 2e-5};
// f32 on 100 + N(0, 1) data: the f32 mean of values near 100 is off by about 3e-5, and
// so is every normalised value (std is about 1); the weight (also near 100) scales that.
constexpr Tolerance kNormF32Offset{1e-4, 1e-4};
// f16 and bf16: statistics in f32, the result rounded once (2^-11 and 2^-8 relative).
constexpr Tolerance kNormF16{1e-3, 1e-4};
constexpr Tolerance kNormBF16{8e-3, 1e-3};

Index unravel(int64_t flat, const Index& shape) {
  Index idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

// y = (x - mean_g) / sqrt(var_g + eps) [* w_p + b_p], where g = group_of(index) picks the
// statistics (mean and biased variance over all elements of the group, two passes in
// double) and p = param_of(index) the affine parameters (nullptr: no affine).
std::vector<double> normalize_ref(const std::vector<double>& x, const Index& shape, double eps,
                                  const std::function<int64_t(const Index&)>& group_of,
                                  const std::vector<double>* weight, const std::vector<double>* bias,
                                  const std::function<int64_t(const Index&)>& param_of) {
  std::map<int64_t, double> sum, count, sq_dev;
  std::vector<int64_t> group(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    group[i] = group_of(unravel(static_cast<int64_t>(i), shape));
    sum[group[i]] += x[i];
    count[group[i]] += 1;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    double dev = x[i] - sum[group[i]] / count[group[i]];
    sq_dev[group[i]] += dev * dev;
  }
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double mean = sum[group[i]] / count[group[i]];
    double var = sq_dev[group[i]] / count[group[i]];
    y[i] = (x[i] - mean) / std::sqrt(var + eps);
    if (weight != nullptr) {
      int64_t p = param_of(unravel(static_cast<int64_t>(i), shape));
      y[i] = y[i] * (*weight)[p] + (*bias)[p];
    }
  }
  return y;
}

struct NormCase {
  std::string spec;
  Index shape;
  double eps;
  std::function<int64_t(const Index&)> group_of;
  bool affine;
  std::function<int64_t(const Index&)> param_of;
};

void expect_norm(const NormCase& c, Tolerance tol, Distribution distribution = Distribution::kNormal) {
  SCOPED_TRACE(c.spec + " " + std::string(interp::distribution_name(distribution)));
  OpRun run = run_op(c.spec, 5, distribution);
  ASSERT_EQ(run.arg(0).shape(), c.shape);
  EXPECT_EQ(run.output().shape(), c.shape);
  std::vector<double> weight, bias;
  if (c.affine) {
    weight = to_doubles(run.arg(1));
    bias = to_doubles(run.arg(2));
  }
  // Absolute errors of the normalised value grow with the weight that multiplies them.
  double max_weight = 0;
  for (double w : weight) max_weight = std::max(max_weight, std::fabs(w));
  double atol = tol.atol * (1 + max_weight);
  std::vector<double> expected = normalize_ref(to_doubles(run.arg(0)), c.shape, c.eps, c.group_of,
                                               c.affine ? &weight : nullptr, c.affine ? &bias : nullptr, c.param_of);
  EXPECT_TRUE(all_close(run.output(), expected, tol.rtol, atol));
}

int64_t channel(const Index& i) { return i[1]; }

NormCase batch_norm_case(const std::string& spec, const Index& shape, double eps = 1e-5) {
  return {spec, shape, eps, channel, true, channel};
}

TEST(NormOps, BatchNormUsesBatchStatisticsPerChannel) {
  expect_norm(batch_norm_case("batch_norm:shape=3x5x7x9", {3, 5, 7, 9}), kNormF32);
  expect_norm(batch_norm_case("batch_norm:shape=3x5x7x9", {3, 5, 7, 9}), kNormF32Offset, Distribution::kOffset);
  expect_norm(batch_norm_case("batch_norm:shape=3x5x7x9", {3, 5, 7, 9}), kNormF32, Distribution::kEdge);
  // BatchNorm1d's two layouts: (N, C) and (N, C, L).
  expect_norm(batch_norm_case("batch_norm:shape=13x3", {13, 3}), kNormF32);
  expect_norm(batch_norm_case("batch_norm:shape=2x3x11", {2, 3, 11}), kNormF32);
  // A large eps shows it is added to the variance.
  expect_norm(batch_norm_case("batch_norm:shape=3x5x7,eps=0.5", {3, 5, 7}, 0.5), kNormF32);
}

TEST(NormOps, BatchNormHalfPrecision) {
  expect_norm(batch_norm_case("batch_norm:shape=3x5x7x9,dtype=f16", {3, 5, 7, 9}), kNormF16);
  expect_norm(batch_norm_case("batch_norm:shape=3x5x7x9,dtype=bf16", {3, 5, 7, 9}), kNormBF16);
}

// Eval mode normalises with the running statistics given as inputs, not the batch's.
TEST(NormOps, BatchNormEvalModeUsesRunningStatistics) {
  for (const auto& [spec, shape] : std::vector<std::pair<std::string, Index>>{
           {"batch_norm:shape=3x5x7x9,training=false", {3, 5, 7, 9}},
           {"batch_norm:shape=2x3x11,training=false,eps=0.5", {2, 3, 11}}}) {
    SCOPED_TRACE(spec);
    OpRun run = run_op(spec, 9);
    double eps = spec.find("eps=0.5") != std::string::npos ? 0.5 : 1e-5;
    std::vector<double> x = to_doubles(run.arg(0)), weight = to_doubles(run.arg(1)), bias = to_doubles(run.arg(2)),
                        running_mean = to_doubles(run.arg(3)), running_var = to_doubles(run.arg(4));
    ASSERT_EQ(running_var.size(), static_cast<size_t>(shape[1]));
    std::vector<double> expected(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      int64_t c = unravel(static_cast<int64_t>(i), shape)[1];
      ASSERT_GT(running_var[c], 0);
      expected[i] = (x[i] - running_mean[c]) / std::sqrt(running_var[c] + eps) * weight[c] + bias[c];
    }
    EXPECT_TRUE(all_close(run.output(), expected, 1e-5, 1e-5));
  }
}

TEST(NormOps, InstanceNormPerSampleAndChannel) {
  auto per_instance = [](const Index& i) { return i[0] * 1000 + i[1]; };
  expect_norm({"instance_norm:shape=3x5x7x9", {3, 5, 7, 9}, 1e-5, per_instance, false, nullptr}, kNormF32);
  expect_norm({"instance_norm:shape=3x5x7x9", {3, 5, 7, 9}, 1e-5, per_instance, false, nullptr}, kNormF32Offset,
              Distribution::kOffset);
  expect_norm({"instance_norm:shape=2x3x13", {2, 3, 13}, 1e-5, per_instance, false, nullptr}, kNormF32);
  expect_norm({"instance_norm:shape=2x3x5x7,affine=true", {2, 3, 5, 7}, 1e-5, per_instance, true, channel}, kNormF32);
  expect_norm({"instance_norm:shape=2x3x5x7,dtype=f16", {2, 3, 5, 7}, 1e-5, per_instance, false, nullptr}, kNormF16);
}

TEST(NormOps, InstanceNormWithoutAffineHasOnlyTheInput) {
  Workload w = OpRegistry::global().make_workload("instance_norm:shape=2x3x5x7");
  EXPECT_EQ(w.func.inputs().size(), 1u);
  Workload affine = OpRegistry::global().make_workload("instance_norm:shape=2x3x5x7,affine=true");
  EXPECT_EQ(affine.func.inputs().size(), 3u);
}

TEST(NormOps, GroupNormPerSampleAndGroup) {
  auto groups_of = [](int64_t group_size) {
    return [group_size](const Index& i) { return i[0] * 1000 + i[1] / group_size; };
  };
  expect_norm({"group_norm:shape=3x6x5x7,num_groups=3", {3, 6, 5, 7}, 1e-5, groups_of(2), true, channel}, kNormF32);
  expect_norm({"group_norm:shape=3x6x5x7,num_groups=3", {3, 6, 5, 7}, 1e-5, groups_of(2), true, channel},
              kNormF32Offset, Distribution::kOffset);
  // One group is a layer norm over (C, spatial...); C groups an instance norm.
  expect_norm({"group_norm:shape=3x6x5x7,num_groups=1", {3, 6, 5, 7}, 1e-5, groups_of(6), true, channel}, kNormF32);
  expect_norm({"group_norm:shape=3x6x5x7,num_groups=6", {3, 6, 5, 7}, 1e-5, groups_of(1), true, channel}, kNormF32);
  expect_norm({"group_norm:shape=4x6,num_groups=2", {4, 6}, 1e-5, groups_of(3), true, channel}, kNormF32);
  expect_norm({"group_norm:shape=3x6x5x7,num_groups=2,dtype=bf16", {3, 6, 5, 7}, 1e-5, groups_of(3), true, channel},
              kNormBF16);
}

TEST(NormOps, LayerNormOverTrailingDims) {
  Index shape = {3, 5, 7};
  auto leading = [](int lead) {
    return [lead](const Index& i) {
      int64_t g = 0;
      for (int d = 0; d < lead; ++d) g = g * 100 + i[d];
      return g;
    };
  };
  auto trailing = [shape](int lead) {
    return [shape, lead](const Index& i) {
      int64_t p = 0;
      for (size_t d = lead; d < shape.size(); ++d) p = p * shape[d] + i[d];
      return p;
    };
  };
  expect_norm({"layer_norm:shape=3x5x7", shape, 1e-5, leading(2), true, trailing(2)}, kNormF32);
  expect_norm({"layer_norm:shape=3x5x7,normalized_dims=2", shape, 1e-5, leading(1), true, trailing(1)}, kNormF32);
  expect_norm({"layer_norm:shape=3x5x7,normalized_dims=3", shape, 1e-5, leading(0), true, trailing(0)}, kNormF32);
  expect_norm({"layer_norm:shape=3x5x7,normalized_dims=2", shape, 1e-5, leading(1), true, trailing(1)}, kNormF32Offset,
              Distribution::kOffset);
  expect_norm({"layer_norm:shape=3x5x7,elementwise_affine=false", shape, 1e-5, leading(2), false, nullptr}, kNormF32);
  expect_norm({"layer_norm:shape=3x5x7,eps=0.25", shape, 0.25, leading(2), true, trailing(2)}, kNormF32);
  expect_norm({"layer_norm:shape=3x5x7,dtype=f16", shape, 1e-5, leading(2), true, trailing(2)}, kNormF16);
}

// The unscheduled norm is statistics stages then one apply stage.
TEST(NormOps, BatchNormIsWrittenAsStatisticsThenApply) {
  Workload w = OpRegistry::global().make_workload("batch_norm:shape=3x5x7x9");
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
  EXPECT_EQ(names, (std::vector<std::string>{"x_sum", "mean", "sq_dev_sum", "inv_std", "batch_norm"}));
}

// y = x / scale(row) for the hand-written norms, rows along `axis`.
std::vector<double> axis_scale_ref(const std::vector<double>& x, const Index& shape, int axis,
                                   const std::function<double(const std::vector<double>& row)>& scale_of) {
  int64_t outer = 1, inner = 1, length = shape[axis];
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      std::vector<double> row;
      for (int64_t k = 0; k < length; ++k) row.push_back(x[(o * length + k) * inner + in]);
      double scale = scale_of(row);
      for (int64_t k = 0; k < length; ++k) y[(o * length + k) * inner + in] = row[k] / scale;
    }
  }
  return y;
}

void expect_axis_norm(const std::string& spec, const Index& shape, int axis,
                      const std::function<double(const std::vector<double>&)>& scale_of, Tolerance tol = kNormF32,
                      Distribution distribution = Distribution::kNormal) {
  SCOPED_TRACE(spec + " " + std::string(interp::distribution_name(distribution)));
  OpRun run = run_op(spec, 4, distribution);
  ASSERT_EQ(run.arg(0).shape(), shape);
  EXPECT_EQ(run.output().shape(), shape);
  EXPECT_TRUE(all_close(run.output(), axis_scale_ref(to_doubles(run.arg(0)), shape, axis, scale_of), tol.rtol,
                        tol.atol));
}

std::function<double(const std::vector<double>&)> rms_of(double eps) {
  return [eps](const std::vector<double>& row) {
    double sq = 0;
    for (double v : row) sq += v * v;
    return std::sqrt(sq / static_cast<double>(row.size()) + eps);
  };
}

double abs_mean_of(const std::vector<double>& row) {
  double s = 0;
  for (double v : row) s += std::fabs(v);
  return s / static_cast<double>(row.size());
}

double l2_of(const std::vector<double>& row) {
  double sq = 0;
  for (double v : row) sq += v * v;
  return std::sqrt(sq);
}

TEST(NormOps, RmsNormAlongAxis) {
  expect_axis_norm("rms_norm:shape=3x5x7x9", {3, 5, 7, 9}, 1, rms_of(1e-5));
  expect_axis_norm("rms_norm:shape=3x5x7x9", {3, 5, 7, 9}, 1, rms_of(1e-5), kNormF32, Distribution::kEdge);
  expect_axis_norm("rms_norm:shape=3x5x7x9,axis=-1", {3, 5, 7, 9}, 3, rms_of(1e-5));
  expect_axis_norm("rms_norm:shape=7x13,axis=1,eps=0.5", {7, 13}, 1, rms_of(0.5));
  expect_axis_norm("rms_norm:shape=3x5x7x9,dtype=f16", {3, 5, 7, 9}, 1, rms_of(1e-5), kNormF16);
}

TEST(NormOps, L1NormDividesByTheMeanAbsoluteValue) {
  expect_axis_norm("l1_norm:shape=7x13", {7, 13}, 1, abs_mean_of);
  expect_axis_norm("l1_norm:shape=7x13", {7, 13}, 1, abs_mean_of, kNormF32, Distribution::kRand);
  expect_axis_norm("l1_norm:shape=3x5x7,axis=0", {3, 5, 7}, 0, abs_mean_of);
  expect_axis_norm("l1_norm:shape=7x13,dtype=bf16", {7, 13}, 1, abs_mean_of, kNormBF16);
}

TEST(NormOps, L2NormAlongAxis) {
  expect_axis_norm("l2_norm:shape=7x13", {7, 13}, 1, l2_of);
  expect_axis_norm("l2_norm:shape=7x13", {7, 13}, 1, l2_of, kNormF32, Distribution::kEdge);
  expect_axis_norm("l2_norm:shape=3x5x7,axis=2", {3, 5, 7}, 2, l2_of);
  expect_axis_norm("l2_norm:shape=7x13,dtype=f16", {7, 13}, 1, l2_of, kNormF16);
}

TEST(NormOps, FrobeniusNormOverTheWholeTensor) {
  for (const auto& [spec, shape] : std::vector<std::pair<std::string, Index>>{
           {"frobenius_norm:shape=3x5x7x9", {3, 5, 7, 9}}, {"frobenius_norm:shape=13", {13}}}) {
    for (Distribution d : {Distribution::kNormal, Distribution::kEdge}) {
      SCOPED_TRACE(spec);
      OpRun run = run_op(spec, 6, d);
      std::vector<double> x = to_doubles(run.arg(0));
      double norm = l2_of(x);
      std::vector<double> expected;
      for (double v : x) expected.push_back(v / norm);
      EXPECT_EQ(run.output().shape(), shape);
      EXPECT_TRUE(all_close(run.output(), expected, 1e-5, 1e-7));
    }
  }
}

TEST(NormOps, BadParametersAreUserErrorsNamingTheParameter) {
  EXPECT_NE(user_error_of("group_norm:shape=2x8x3x3,num_groups=3").find("parameter num_groups"), std::string::npos);
  EXPECT_NE(user_error_of("layer_norm:shape=3x5x7,normalized_dims=4").find("parameter normalized_dims"),
            std::string::npos);
  EXPECT_NE(user_error_of("instance_norm:shape=4x8").find("parameter shape"), std::string::npos);
  EXPECT_NE(user_error_of("batch_norm:shape=8").find("parameter shape"), std::string::npos);
  // torch's "expected more than 1 value per channel when training" and its spatial twin.
  EXPECT_NE(user_error_of("batch_norm:shape=1x8x1x1").find("parameter shape"), std::string::npos);
  EXPECT_EQ(user_error_of("batch_norm:shape=1x8x1x1,training=false"), "(no error)");
  EXPECT_NE(user_error_of("instance_norm:shape=4x8x1x1").find("parameter shape"), std::string::npos);
  EXPECT_NE(user_error_of("rms_norm:shape=3x5,axis=2").find("parameter axis"), std::string::npos);
  EXPECT_NE(user_error_of("l2_norm:shape=3x5,axis=-3").find("parameter axis"), std::string::npos);
}

TEST(NormOps, EveryOpRunsWithItsDefaults) {
  int ops = 0;
  for (const OpKind& op : OpRegistry::global().kinds()) {
    if (op.category != "norm") continue;
    SCOPED_TRACE(op.name);
    OpRun run = run_op(op.name);
    std::vector<double> y = to_doubles(run.output());
    EXPECT_TRUE(std::none_of(y.begin(), y.end(), [](double v) { return std::isnan(v); }));
    ++ops;
  }
  EXPECT_EQ(ops, 8);
}

}  // namespace
}  // namespace dragon::ops
