// Scan ops (cumsum, masked_cumsum, cumprod) on the interpreter against plain double
// loops, their stage structure (a real ordered scan), their user errors and the
// KernelBench mapping. Not a test of the interpreter itself.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dragon/ir/stmt.h"
#include "dragon/support/error.h"
#include "unit/ops/op_test_util.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {

using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::to_doubles;
using testing::user_error_of;

// A row-major shape viewed as [outer, length, inner] around the scanned axis.
struct AxisView {
  int64_t outer = 1, length = 1, inner = 1;
  AxisView(const std::vector<int64_t>& shape, int axis) {
    for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
      if (d < axis) outer *= shape[d];
      if (d > axis) inner *= shape[d];
    }
    length = shape[axis];
  }
  int64_t flat(int64_t o, int64_t k, int64_t in) const { return (o * length + k) * inner + in; }
};

enum class Combine { kSum, kProduct };

// Inclusive or exclusive scan in double, walking the axis forward or backward.
std::vector<double> reference_scan(const std::vector<double>& x, const std::vector<int64_t>& shape, int axis,
                                   Combine combine, bool reverse, bool exclusive) {
  AxisView view(shape, axis);
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t in = 0; in < view.inner; ++in) {
      double acc = combine == Combine::kSum ? 0.0 : 1.0;
      for (int64_t step = 0; step < view.length; ++step) {
        int64_t k = reverse ? view.length - 1 - step : step;
        double value = x[view.flat(o, k, in)];
        if (!exclusive) acc = combine == Combine::kSum ? acc + value : acc * value;
        y[view.flat(o, k, in)] = acc;
        if (exclusive) acc += value;
      }
    }
  }
  return y;
}

// Absolute error bound of an f32 running sum: length roundings, each at most one ulp of
// the largest partial sum, which the sum of magnitudes along the axis bounds.
double f32_sum_tolerance(const std::vector<double>& x, const std::vector<int64_t>& shape, int axis) {
  AxisView view(shape, axis);
  double largest = 0;
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t in = 0; in < view.inner; ++in) {
      double magnitude = 0;
      for (int64_t k = 0; k < view.length; ++k) magnitude += std::fabs(x[view.flat(o, k, in)]);
      largest = std::max(largest, magnitude);
    }
  }
  return static_cast<double>(view.length) * std::ldexp(largest, -23) + 1e-12;
}

struct Case {
  std::string spec;
  std::vector<int64_t> shape;
  int axis;
  bool reverse = false;
  bool exclusive = false;
};

void expect_cumsum(const Case& c, interp::Distribution distribution = interp::Distribution::kNormal) {
  OpRun run = run_op(c.spec, 7, distribution);
  std::vector<double> x = to_doubles(run.arg(0));
  std::vector<double> expected = reference_scan(x, c.shape, c.axis, Combine::kSum, c.reverse, c.exclusive);
  EXPECT_TRUE(all_close(run.output(), expected, 1e-5, f32_sum_tolerance(x, c.shape, c.axis))) << c.spec;
}

TEST(ScanCumsum, ForwardAlongEachAxis) {
  expect_cumsum({"cumsum:shape=7x13,dim=1", {7, 13}, 1});
  expect_cumsum({"cumsum:shape=7x13,dim=0", {7, 13}, 0});
  expect_cumsum({"cumsum:shape=13x7,dim=-2", {13, 7}, 0});
  expect_cumsum({"cumsum:shape=3x5x7,dim=1", {3, 5, 7}, 1});
  expect_cumsum({"cumsum:shape=3x5x7,dim=-1", {3, 5, 7}, 2});
  expect_cumsum({"cumsum:shape=29,dim=0", {29}, 0});
}

TEST(ScanCumsum, ReverseSumsFromTheEnd) {
  expect_cumsum({"cumsum:shape=7x13,dim=1,reverse=true", {7, 13}, 1, true});
  expect_cumsum({"cumsum:shape=3x5x7,dim=0,reverse=true", {3, 5, 7}, 0, true});
  expect_cumsum({"cumsum:shape=3x5x7,dim=2,reverse=true", {3, 5, 7}, 2, true});
}

TEST(ScanCumsum, ExclusiveLeavesOutTheElementItself) {
  expect_cumsum({"cumsum:shape=7x13,dim=1,exclusive=true", {7, 13}, 1, false, true});
  expect_cumsum({"cumsum:shape=3x5x7,dim=1,exclusive=true", {3, 5, 7}, 1, false, true});
  expect_cumsum({"cumsum:shape=7x13,dim=1,reverse=true,exclusive=true", {7, 13}, 1, true, true});
}

TEST(ScanCumsum, ExclusiveOverLengthOneIsZero) {
  OpRun run = run_op("cumsum:shape=5x1,dim=1,exclusive=true", 3);
  EXPECT_TRUE(all_close(run.output(), std::vector<double>(5, 0.0), 0, 0));
  OpRun inclusive = run_op("cumsum:shape=5x1,dim=1", 3);
  EXPECT_TRUE(all_close(inclusive.output(), to_doubles(inclusive.arg(0)), 0, 0));
}

TEST(ScanCumsum, EdgeValuesAndRandInputs) {
  expect_cumsum({"cumsum:shape=7x13,dim=1", {7, 13}, 1}, interp::Distribution::kEdge);
  expect_cumsum({"cumsum:shape=7x13,dim=1,reverse=true", {7, 13}, 1, true}, interp::Distribution::kEdge);
  expect_cumsum({"cumsum:shape=7x13,dim=1,exclusive=true", {7, 13}, 1, false, true}, interp::Distribution::kRand);
  expect_cumsum({"cumsum:shape=3x97,dim=1", {3, 97}, 1}, interp::Distribution::kOffset);
}

// 16-bit types accumulate in f32 and round once: only the output rounding is visible.
TEST(ScanCumsum, HalfTypesRoundOnlyTheOutput) {
  struct TypeCase {
    std::string dtype;
    double rtol;
  };
  for (const TypeCase& t : {TypeCase{"f16", 1e-3}, TypeCase{"bf16", 8e-3}}) {
    for (bool reverse : {false, true}) {
      std::string spec = "cumsum:shape=7x13,dim=1,dtype=" + t.dtype + (reverse ? ",reverse=true" : "");
      OpRun run = run_op(spec, 11);
      ASSERT_EQ(run.output().dtype(), *ir::parse_dtype(t.dtype));
      std::vector<double> x = to_doubles(run.arg(0));
      std::vector<double> expected = reference_scan(x, {7, 13}, 1, Combine::kSum, reverse, false);
      EXPECT_TRUE(all_close(run.output(), expected, t.rtol, 1e-5)) << spec;
    }
  }
}

TEST(ScanMaskedCumsum, SumsOnlyMaskedElements) {
  struct MaskCase {
    std::string spec;
    std::vector<int64_t> shape;
    int axis;
  };
  for (const MaskCase& c : {MaskCase{"masked_cumsum:shape=7x13,dim=1", {7, 13}, 1},
                            MaskCase{"masked_cumsum:shape=3x5x7,dim=0", {3, 5, 7}, 0},
                            MaskCase{"masked_cumsum:shape=3x5x7,dim=-1", {3, 5, 7}, 2}}) {
    OpRun run = run_op(c.spec, 5);
    std::vector<double> x = to_doubles(run.arg(0));
    std::vector<double> mask = to_doubles(run.arg(1));
    ASSERT_EQ(run.arg(1).dtype(), ir::DataType::boolean());
    int64_t set = 0;
    std::vector<double> masked(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      set += mask[i] != 0;
      masked[i] = mask[i] != 0 ? x[i] : 0.0;
    }
    // The mask must mix both values, or the test would not tell masking from not.
    ASSERT_GT(set, 0);
    ASSERT_LT(set, static_cast<int64_t>(x.size()));
    std::vector<double> expected = reference_scan(masked, c.shape, c.axis, Combine::kSum, false, false);
    EXPECT_TRUE(all_close(run.output(), expected, 1e-5, f32_sum_tolerance(x, c.shape, c.axis))) << c.spec;
  }
}

TEST(ScanMaskedCumsum, HalfTypes) {
  for (const std::string dtype : {"f16", "bf16"}) {
    OpRun run = run_op("masked_cumsum:shape=7x13,dim=1,dtype=" + dtype, 2);
    std::vector<double> x = to_doubles(run.arg(0));
    std::vector<double> mask = to_doubles(run.arg(1));
    for (size_t i = 0; i < x.size(); ++i) x[i] = mask[i] != 0 ? x[i] : 0.0;
    std::vector<double> expected = reference_scan(x, {7, 13}, 1, Combine::kSum, false, false);
    EXPECT_TRUE(all_close(run.output(), expected, dtype == "f16" ? 1e-3 : 8e-3, 1e-5)) << dtype;
  }
}

void expect_cumprod(const Case& c, interp::Distribution distribution, double rtol = 1e-5) {
  OpRun run = run_op(c.spec, 13, distribution);
  std::vector<double> x = to_doubles(run.arg(0));
  std::vector<double> expected = reference_scan(x, c.shape, c.axis, Combine::kProduct, c.reverse, false);
  EXPECT_TRUE(all_close(run.output(), expected, rtol, 1e-30)) << c.spec;
}

TEST(ScanCumprod, ForwardAndReverse) {
  // Uniform values in [-1, 1) keep the products bounded and change their signs.
  expect_cumprod({"cumprod:shape=7x13,dim=1", {7, 13}, 1}, interp::Distribution::kUniform);
  expect_cumprod({"cumprod:shape=7x13,dim=0", {7, 13}, 0}, interp::Distribution::kNormal);
  expect_cumprod({"cumprod:shape=3x5x7,dim=-2", {3, 5, 7}, 1}, interp::Distribution::kRand);
  expect_cumprod({"cumprod:shape=7x13,dim=1,reverse=true", {7, 13}, 1, true}, interp::Distribution::kUniform);
  // Zeros make every later product zero; +-1 and 1e3 values keep it finite over 13 steps.
  expect_cumprod({"cumprod:shape=7x13,dim=1", {7, 13}, 1}, interp::Distribution::kEdge);
}

TEST(ScanCumprod, HalfTypes) {
  expect_cumprod({"cumprod:shape=7x13,dim=1,dtype=f16", {7, 13}, 1}, interp::Distribution::kNormal, 1e-3);
  expect_cumprod({"cumprod:shape=7x13,dim=1,dtype=bf16,reverse=true", {7, 13}, 1, true}, interp::Distribution::kNormal,
                 8e-3);
}

// Collects the iteration kinds of every block below `s` except the root.
void collect_kinds(const ir::Stmt& s, std::vector<std::vector<ir::IterKind>>& out) {
  if (const auto* realize = s.as<ir::BlockRealizeNode>()) {
    std::vector<ir::IterKind> kinds;
    for (const ir::IterVar& iv : realize->block->iter_vars) kinds.push_back(iv.kind);
    if (realize->block->name != "root") out.push_back(kinds);
    collect_kinds(realize->block->body, out);
  } else if (const auto* loop = s.as<ir::ForNode>()) {
    collect_kinds(loop->body, out);
  } else if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    for (const ir::Stmt& child : seq->seq) collect_kinds(child, out);
  }
}

// A real scan: one block with one ordered axis and no reduction anywhere (linear work).
TEST(ScanStructure, EveryScanIsOrderedWithoutReductions) {
  for (const std::string spec : {"cumsum:shape=7x13,dim=1", "cumsum:shape=7x13,dim=0,reverse=true,exclusive=true",
                                 "masked_cumsum:shape=7x13", "cumprod:shape=3x5x7,dim=2,dtype=f16"}) {
    Workload w = OpRegistry::global().make_workload(spec);
    std::vector<std::vector<ir::IterKind>> blocks;
    collect_kinds(w.func->body, blocks);
    int ordered_blocks = 0;
    for (const auto& kinds : blocks) {
      int ordered = 0;
      for (ir::IterKind k : kinds) {
        EXPECT_NE(k, ir::IterKind::kReduce) << spec;
        ordered += k == ir::IterKind::kOrdered;
      }
      EXPECT_LE(ordered, 1) << spec;
      ordered_blocks += ordered;
    }
    EXPECT_EQ(ordered_blocks, 1) << spec;
    EXPECT_EQ(w.func.outputs()[0]->name, "Y") << spec;
  }
}

// Defaults stay small enough for `dragon run` on the interpreter, and write every element
// (outputs start as NaN).
TEST(ScanOps, DefaultsWriteEveryElement) {
  for (const std::string name : {"cumsum", "masked_cumsum", "cumprod"}) {
    OpRun run = run_op(name, 1);
    ASSERT_EQ(run.output().shape(), (std::vector<int64_t>{64, 1024})) << name;
    for (double v : to_doubles(run.output())) ASSERT_FALSE(std::isnan(v)) << name;
  }
}

TEST(ScanErrors, DimOutOfRangeNamesTheParameter) {
  for (const std::string spec : {"cumsum:shape=4x5,dim=2", "cumsum:shape=4x5,dim=-3", "masked_cumsum:shape=4,dim=1",
                                 "cumprod:shape=2x3x4,dim=3"}) {
    std::string message = user_error_of(spec);
    EXPECT_NE(message.find("parameter dim"), std::string::npos) << spec << ": " << message;
    EXPECT_NE(message.find("out of range"), std::string::npos) << spec << ": " << message;
  }
  EXPECT_NE(user_error_of("cumsum:shape=4x0").find("parameter shape"), std::string::npos);
}

}  // namespace
}  // namespace dragon::ops
