// Reductions over one axis against plain double-precision references written here, plus
// keepdim shapes, first-index tie breaking, parameter errors and the KernelBench file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

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

using Index = std::vector<int64_t>;
// Reduces one row (the values along the axis) to one value.
using RowRef = std::function<double(const std::vector<double>& row)>;

double row_sum(const std::vector<double>& row) {
  double s = 0;
  for (double v : row) s += v;
  return s;
}
double row_mean(const std::vector<double>& row) { return row_sum(row) / static_cast<double>(row.size()); }
double row_max(const std::vector<double>& row) { return *std::max_element(row.begin(), row.end()); }
double row_min(const std::vector<double>& row) { return *std::min_element(row.begin(), row.end()); }
// The first position of the extreme, as torch reports on ties.
double row_argmax(const std::vector<double>& row) {
  size_t best = 0;
  for (size_t k = 1; k < row.size(); ++k) {
    if (row[k] > row[best]) best = k;
  }
  return static_cast<double>(best);
}
double row_argmin(const std::vector<double>& row) {
  size_t best = 0;
  for (size_t k = 1; k < row.size(); ++k) {
    if (row[k] < row[best]) best = k;
  }
  return static_cast<double>(best);
}

// Runs `op` on `shape` along `axis` (as written in the spec, maybe negative) and
// compares with `ref` applied to every row; checks the keepdim shape too.
void expect_reduce(const std::string& op, const Index& shape, int axis, bool keepdim, const RowRef& ref,
                   const std::string& extra = "", double rtol = 1e-5, double atol = 1e-6,
                   Distribution distribution = Distribution::kNormal) {
  std::string shape_text;
  for (int64_t d : shape) shape_text += (shape_text.empty() ? "" : "x") + std::to_string(d);
  std::string spec = op + ":shape=" + shape_text + ",axis=" + std::to_string(axis) +
                     ",keepdim=" + (keepdim ? "true" : "false") + extra;
  SCOPED_TRACE(spec + " " + std::string(interp::distribution_name(distribution)));
  OpRun run = run_op(spec, 8, distribution);

  int rank = static_cast<int>(shape.size());
  int a = axis < 0 ? axis + rank : axis;
  Index out_shape = shape;
  if (keepdim) {
    out_shape[a] = 1;
  } else {
    out_shape.erase(out_shape.begin() + a);
  }
  EXPECT_EQ(run.output().shape(), out_shape);

  int64_t outer = 1, inner = 1, length = shape[a];
  for (int d = 0; d < a; ++d) outer *= shape[d];
  for (int d = a + 1; d < rank; ++d) inner *= shape[d];
  std::vector<double> x = to_doubles(run.arg(0));
  std::vector<double> expected(outer * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      std::vector<double> row;
      for (int64_t k = 0; k < length; ++k) row.push_back(x[(o * length + k) * inner + in]);
      expected[o * inner + in] = ref(row);
    }
  }
  EXPECT_TRUE(all_close(run.output(), expected, rtol, atol));
}

// Every axis of a 3-D shape, spelled positive and negative, with and without keepdim.
void expect_every_axis(const std::string& op, const RowRef& ref, double rtol, double atol,
                       Distribution distribution = Distribution::kNormal) {
  Index shape = {5, 7, 13};
  for (int axis : {0, 1, 2, -1, -3}) {
    for (bool keepdim : {false, true}) expect_reduce(op, shape, axis, keepdim, ref, "", rtol, atol, distribution);
  }
}

TEST(ReduceOps, Sum) {
  expect_every_axis("sum", row_sum, 1e-5, 1e-5);
  expect_every_axis("sum", row_sum, 1e-5, 1e-3, Distribution::kEdge);
  expect_reduce("sum", {7}, 0, false, row_sum);
  expect_reduce("sum", {3, 5}, 1, true, row_sum, ",dtype=f64", 1e-13, 1e-13);
}

// f16 and bf16 sums accumulate in f32 and round once: a long row stays within one
// rounding of the exact sum, which an f16 accumulator would not.
TEST(ReduceOps, HalfPrecisionSumsAccumulateInF32) {
  expect_reduce("sum", {3, 2001}, 1, false, row_sum, ",dtype=f16", 1e-3, 1e-2, Distribution::kRand);
  expect_reduce("sum", {3, 2001}, 1, false, row_sum, ",dtype=bf16", 8e-3, 1e-1, Distribution::kRand);
  expect_reduce("mean", {3, 2001}, 1, false, row_mean, ",dtype=f16", 1e-3, 1e-5, Distribution::kRand);
}

TEST(ReduceOps, Mean) {
  expect_every_axis("mean", row_mean, 1e-5, 1e-6);
  expect_every_axis("mean", row_mean, 1e-5, 1e-6, Distribution::kOffset);
  expect_reduce("mean", {5, 7}, 0, false, row_mean, ",dtype=bf16", 8e-3, 1e-3);
}

TEST(ReduceOps, MaxAndMinAreExact) {
  for (Distribution d : {Distribution::kNormal, Distribution::kEdge}) {
    expect_every_axis("max", row_max, 0, 0, d);
    expect_every_axis("min", row_min, 0, 0, d);
  }
  expect_reduce("max", {5, 7}, 1, false, row_max, ",dtype=f16", 0, 0);
  expect_reduce("min", {5, 7}, 0, true, row_min, ",dtype=bf16", 0, 0);
}

// The edge distribution repeats 0, +-1 and +-1000 often, so rows have ties.
TEST(ReduceOps, ArgMaxAndArgMinReportTheFirstExtreme) {
  for (Distribution d : {Distribution::kNormal, Distribution::kEdge}) {
    expect_every_axis("argmax", row_argmax, 0, 0, d);
    expect_every_axis("argmin", row_argmin, 0, 0, d);
  }
  expect_reduce("argmax", {5, 7}, 1, false, row_argmax, ",dtype=f16", 0, 0, Distribution::kEdge);
  OpRun run = run_op("argmax:shape=5x7x13");
  EXPECT_EQ(run.output().dtype(), ir::DataType::i64());
}

TEST(ReduceOps, AxisOutOfRangeIsAUserErrorNamingTheAxis) {
  for (std::string op : {"sum", "mean", "max", "min", "argmax", "argmin"}) {
    EXPECT_NE(user_error_of(op + ":shape=5x7,axis=2").find("parameter axis"), std::string::npos) << op;
    EXPECT_NE(user_error_of(op + ":shape=5x7,axis=-3").find("parameter axis"), std::string::npos) << op;
  }
  EXPECT_NE(user_error_of("argmax:dtype=i32").find("parameter dtype"), std::string::npos);
}

TEST(ReduceOps, EveryOpRunsWithItsDefaults) {
  int ops = 0;
  for (const OpKind& op : OpRegistry::global().kinds()) {
    if (op.category != "reduce") continue;
    SCOPED_TRACE(op.name);
    OpRun run = run_op(op.name);
    EXPECT_EQ(run.output().shape(), (Index{16, 63}));
    std::vector<double> y = to_doubles(run.output());
    EXPECT_TRUE(std::none_of(y.begin(), y.end(), [](double v) { return std::isnan(v); }));
    ++ops;
  }
  EXPECT_EQ(ops, 6);
}

}  // namespace
}  // namespace dragon::ops
