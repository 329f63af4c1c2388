// Convolution ops on the interpreter against plain double-precision loops: forward convs as
// a direct gather over the unpadded input, transposed convs as a scatter from each input
// (independent of the builders' pad and upsample stages). Also parameter errors and the
// KernelBench mapping file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "dragon/ir/op.h"
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
using testing::find_block;

std::string join_shape(const std::vector<int64_t>& dims) {
  std::string text;
  for (int64_t d : dims) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

// One conv or transposed conv instance, as torch's module arguments.
struct ConvCase {
  std::string op;  // conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  std::vector<int64_t> size = {};
  std::vector<int64_t> kernel = {};
  std::vector<int64_t> stride = {};
  std::vector<int64_t> padding = {};
  std::vector<int64_t> dilation = {};
  std::vector<int64_t> output_padding = {};  // transposed only
  int64_t groups = 1;
  bool bias = false;
  std::string dtype = "f32";

  bool transposed() const { return op.starts_with("conv_transpose"); }
  int rank() const { return static_cast<int>(size.size()); }

  std::string spec() const {
    std::string s = op + ":batch=" + std::to_string(batch) + ",in_channels=" + std::to_string(in_channels) +
                    ",out_channels=" + std::to_string(out_channels) + ",size=" + join_shape(size) +
                    ",kernel=" + join_shape(kernel) + ",stride=" + join_shape(stride) +
                    ",padding=" + join_shape(padding) + ",dilation=" + join_shape(dilation) +
                    ",groups=" + std::to_string(groups) + ",bias=" + (bias ? "true" : "false") + ",dtype=" + dtype;
    if (transposed()) s += ",output_padding=" + join_shape(output_padding);
    return s;
  }
};

// A case's geometry over three spatial dimensions: lower ranks get leading unit
// dimensions (size 1, kernel 1, stride 1, no padding), which leave the result unchanged.
struct Geometry3 {
  std::array<int64_t, 3> size, kernel, stride, padding, dilation, output_padding, out;
};

Geometry3 to_3d(const ConvCase& c) {
  Geometry3 g{};
  int lead = 3 - c.rank();
  for (int d = 0; d < 3; ++d) {
    bool real = d >= lead;
    int e = d - lead;
    g.size[d] = real ? c.size[e] : 1;
    g.kernel[d] = real ? c.kernel[e] : 1;
    g.stride[d] = real ? c.stride[e] : 1;
    g.padding[d] = real ? c.padding[e] : 0;
    g.dilation[d] = real ? c.dilation[e] : 1;
    g.output_padding[d] = real && c.transposed() ? c.output_padding[e] : 0;
    // The output extents of torch's Conv and ConvTranspose documentation.
    int64_t span = g.dilation[d] * (g.kernel[d] - 1);
    g.out[d] = c.transposed() ? (g.size[d] - 1) * g.stride[d] - 2 * g.padding[d] + span + g.output_padding[d] + 1
                              : (g.size[d] + 2 * g.padding[d] - span - 1) / g.stride[d] + 1;
  }
  return g;
}

std::vector<int64_t> output_shape(const ConvCase& c) {
  Geometry3 g = to_3d(c);
  std::vector<int64_t> shape = {c.batch, c.out_channels};
  for (int d = 3 - c.rank(); d < 3; ++d) shape.push_back(g.out[d]);
  return shape;
}

struct Reference {
  std::vector<double> values;
  double magnitude = 0;  // largest sum of |terms| over outputs, which scales rounding error
};

// Flat row-major offset of (a, b, d, h, w) in an array of extents (*, B, D, H, W).
int64_t offset5(int64_t a, int64_t b, int64_t d, int64_t h, int64_t w, int64_t nb, const std::array<int64_t, 3>& e) {
  return (((a * nb + b) * e[0] + d) * e[1] + h) * e[2] + w;
}

// Forward conv: y[n,oc,o] = bias[oc] + sum_{c in group, k} x[n,c,o*s-p+k*d] w[oc,c-group start,k],
// skipping taps that fall in the zero padding.
Reference reference_conv(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                         const std::vector<double>& b) {
  Geometry3 g = to_3d(c);
  int64_t cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  Reference ref;
  ref.values.assign(c.batch * c.out_channels * g.out[0] * g.out[1] * g.out[2], 0.0);
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t oc = 0; oc < c.out_channels; ++oc)
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            double sum = c.bias ? b[oc] : 0.0, mag = c.bias ? std::fabs(b[oc]) : 0.0;
            int64_t group = oc / cout_g;
            for (int64_t ci = 0; ci < cin_g; ++ci)
              for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
                for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                    int64_t id = od * g.stride[0] - g.padding[0] + kd * g.dilation[0];
                    int64_t ih = oh * g.stride[1] - g.padding[1] + kh * g.dilation[1];
                    int64_t iw = ow * g.stride[2] - g.padding[2] + kw * g.dilation[2];
                    if (id < 0 || id >= g.size[0] || ih < 0 || ih >= g.size[1] || iw < 0 || iw >= g.size[2]) continue;
                    double term = x[offset5(n, group * cin_g + ci, id, ih, iw, c.in_channels, g.size)] *
                                  w[offset5(oc, ci, kd, kh, kw, cin_g, g.kernel)];
                    sum += term;
                    mag += std::fabs(term);
                  }
            int64_t at = offset5(n, oc, od, oh, ow, c.out_channels, g.out);
            ref.values[at] = sum;
            ref.magnitude = std::max(ref.magnitude, mag);
          }
  return ref;
}

// Transposed conv as a scatter: input x[n,ic,i] adds x * w[ic,oc in group,k] to output
// position i*s - p + k*d of every output channel oc of its group.
Reference reference_conv_transpose(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                                   const std::vector<double>& b) {
  Geometry3 g = to_3d(c);
  int64_t cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  Reference ref;
  int64_t plane = g.out[0] * g.out[1] * g.out[2];
  ref.values.assign(c.batch * c.out_channels * plane, 0.0);
  std::vector<double> magnitudes(ref.values.size(), 0.0);
  if (c.bias) {
    for (size_t at = 0; at < ref.values.size(); ++at) {
      int64_t oc = static_cast<int64_t>(at / plane) % c.out_channels;
      ref.values[at] = b[oc];
      magnitudes[at] = std::fabs(b[oc]);
    }
  }
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t ic = 0; ic < c.in_channels; ++ic)
      for (int64_t id = 0; id < g.size[0]; ++id)
        for (int64_t ih = 0; ih < g.size[1]; ++ih)
          for (int64_t iw = 0; iw < g.size[2]; ++iw) {
            double value = x[offset5(n, ic, id, ih, iw, c.in_channels, g.size)];
            int64_t group = ic / cin_g;
            for (int64_t ocl = 0; ocl < cout_g; ++ocl)
              for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
                for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                    int64_t od = id * g.stride[0] - g.padding[0] + kd * g.dilation[0];
                    int64_t oh = ih * g.stride[1] - g.padding[1] + kh * g.dilation[1];
                    int64_t ow = iw * g.stride[2] - g.padding[2] + kw * g.dilation[2];
                    if (od < 0 || od >= g.out[0] || oh < 0 || oh >= g.out[1] || ow < 0 || ow >= g.out[2]) continue;
                    double term = value * w[offset5(ic, ocl, kd, kh, kw, cout_g, g.kernel)];
                    int64_t at = offset5(n, group * cout_g + ocl, od, oh, ow, c.out_channels, g.out);
                    ref.values[at] += term;
                    magnitudes[at] += std::fabs(term);
                  }
          }
  for (double m : magnitudes) ref.magnitude = std::max(ref.magnitude, m);
  return ref;
}

// Tolerances: rtol covers the output's own rounding to its type, atol the rounding of the
// accumulation, scaled by the largest sum of |terms| (an f32 sum of up to ~100 terms stays
// well inside 1e-6 of it). 16-bit types accumulate in f32, so their atol is f32's too: an
// f16 or bf16 accumulator would fail.
struct ConvTolerance {
  double rtol;
  double atol_per_magnitude;
  double unit_roundoff;  // of the element type: relative error of one rounding
};
ConvTolerance tolerance_for(const std::string& dtype) {
  if (dtype == "f16") return {1e-3, 1e-6, 0x1p-11};
  if (dtype == "bf16") return {4e-3, 1e-6, 0x1p-8};
  if (dtype == "f64") return {1e-12, 1e-14, 0x1p-53};
  return {1e-5, 1e-6, 0x1p-24};
}

void check_conv(const ConvCase& c, interp::Distribution distribution = interp::Distribution::kNormal) {
  SCOPED_TRACE(c.spec());
  OpRun run = run_op(c.spec(), 7, distribution);
  std::vector<double> x = to_doubles(run.arg(0)), w = to_doubles(run.arg(1));
  std::vector<double> b = c.bias ? to_doubles(run.arg(2)) : std::vector<double>{};
  int64_t cin_g = c.in_channels / c.groups, cout_g = c.out_channels / c.groups;
  std::vector<int64_t> w_shape =
      c.transposed() ? std::vector<int64_t>{c.in_channels, cout_g} : std::vector<int64_t>{c.out_channels, cin_g};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  ASSERT_EQ(run.arg(1).shape(), w_shape) << "weights in torch's layout";
  if (c.bias) {
    ASSERT_EQ(run.arg(2).shape(), (std::vector<int64_t>{c.out_channels}));
  }
  ASSERT_EQ(run.output(0).shape(), output_shape(c));
  Reference ref = c.transposed() ? reference_conv_transpose(c, x, w, b) : reference_conv(c, x, w, b);
  ConvTolerance tol = tolerance_for(c.dtype);
  EXPECT_TRUE(all_close(run.output(0), ref.values, tol.rtol, tol.atol_per_magnitude * std::max(1.0, ref.magnitude)));
}

// ---- conv1d ----

TEST(Conv1d, StridedPaddedDilatedGroupedWithBias) {
  check_conv({.op = "conv1d", .batch = 2, .in_channels = 4, .out_channels = 6, .size = {13}, .kernel = {3},
              .stride = {2}, .padding = {1}, .dilation = {2}, .groups = 2, .bias = true});
}

TEST(Conv1d, PointwiseKernelWithLargeStride) {
  check_conv({.op = "conv1d", .batch = 1, .in_channels = 5, .out_channels = 3, .size = {13}, .kernel = {1},
              .stride = {3}, .padding = {0}, .dilation = {1}});
}

TEST(Conv1d, PaddingWiderThanTheKernelLeavesBiasAtTheBorders) {
  check_conv({.op = "conv1d", .batch = 1, .in_channels = 3, .out_channels = 2, .size = {7}, .kernel = {3},
              .stride = {1}, .padding = {4}, .dilation = {1}, .bias = true});
}

TEST(Conv1d, UniformInputsWithoutBias) {
  check_conv({.op = "conv1d", .batch = 3, .in_channels = 2, .out_channels = 4, .size = {11}, .kernel = {4},
              .stride = {1}, .padding = {0}, .dilation = {3}},
             interp::Distribution::kRand);
}

// ---- conv2d ----

TEST(Conv2d, AsymmetricKernelStridePaddingDilationGroupsBias) {
  check_conv({.op = "conv2d", .batch = 2, .in_channels = 6, .out_channels = 9, .size = {7, 13}, .kernel = {3, 5},
              .stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}, .groups = 3, .bias = true});
}

TEST(Conv2d, AsymmetricInputAndKernelNoBias) {
  check_conv({.op = "conv2d", .batch = 1, .in_channels = 3, .out_channels = 4, .size = {9, 6}, .kernel = {2, 3},
              .stride = {1, 1}, .padding = {0, 0}, .dilation = {1, 1}});
}

TEST(Conv2d, DepthwiseWithChannelMultiplier) {
  check_conv({.op = "conv2d", .batch = 2, .in_channels = 3, .out_channels = 6, .size = {9, 7}, .kernel = {3, 1},
              .stride = {2, 1}, .padding = {1, 0}, .dilation = {1, 1}, .groups = 3, .bias = true});
}

TEST(Conv2d, DepthwiseStridedDilated) {
  check_conv({.op = "conv2d", .batch = 1, .in_channels = 5, .out_channels = 5, .size = {11, 9}, .kernel = {3, 3},
              .stride = {2, 2}, .padding = {1, 2}, .dilation = {2, 1}, .groups = 5});
}

TEST(Conv2d, Pointwise) {
  check_conv({.op = "conv2d", .batch = 2, .in_channels = 7, .out_channels = 5, .size = {5, 3}, .kernel = {1, 1},
              .stride = {1, 1}, .padding = {0, 0}, .dilation = {1, 1}});
}

TEST(Conv2d, SingleInputChannel) {
  check_conv({.op = "conv2d", .batch = 2, .in_channels = 1, .out_channels = 3, .size = {6, 5}, .kernel = {2, 2},
              .stride = {1, 2}, .padding = {1, 0}, .dilation = {1, 1}, .bias = true});
}

TEST(Conv2d, F16AccumulatesInF32) {
  check_conv({.op = "conv2d", .batch = 1, .in_channels = 8, .out_channels = 3, .size = {7, 7}, .kernel = {3, 3},
              .stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1}, .bias = true, .dtype = "f16"});
}

TEST(Conv2d, Bf16) {
  check_conv({.op = "conv2d", .batch = 1, .in_channels = 4, .out_channels = 4, .size = {6, 7}, .kernel = {3, 2},
              .stride = {2, 1}, .padding = {0, 1}, .dilation = {1, 1}, .groups = 2, .dtype = "bf16"});
}

TEST(Conv2d, F64) {
  check_conv({.op = "conv2d", .batch = 1, .in_channels = 2, .out_channels = 2, .size = {5, 5}, .kernel = {3, 3},
              .stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1}, .bias = true, .dtype = "f64"});
}

// ---- conv3d ----

TEST(Conv3d, AsymmetricStridedPaddedDilatedGroupedWithBias) {
  check_conv({.op = "conv3d", .batch = 2, .in_channels = 4, .out_channels = 6, .size = {5, 7, 6},
              .kernel = {3, 1, 2}, .stride = {1, 2, 1}, .padding = {1, 0, 1}, .dilation = {2, 1, 1}, .groups = 2,
              .bias = true});
}

TEST(Conv3d, SquareKernelNoBias) {
  check_conv({.op = "conv3d", .batch = 1, .in_channels = 3, .out_channels = 2, .size = {4, 5, 6}, .kernel = {2, 2, 2},
              .stride = {1, 1, 2}, .padding = {0, 0, 0}, .dilation = {1, 1, 1}});
}

// ---- conv_transpose1d ----

TEST(ConvTranspose1d, StridePaddingDilationOutputPaddingGroupsBias) {
  check_conv({.op = "conv_transpose1d", .batch = 2, .in_channels = 4, .out_channels = 6, .size = {7}, .kernel = {3},
              .stride = {3}, .padding = {2}, .dilation = {2}, .output_padding = {1}, .groups = 2, .bias = true});
}

TEST(ConvTranspose1d, FullPaddingNeedsNoUpsampleStage) {
  // padding = dilation*(kernel-1) with stride 1 makes the transposed conv a plain conv.
  check_conv({.op = "conv_transpose1d", .batch = 1, .in_channels = 3, .out_channels = 2, .size = {9}, .kernel = {3},
              .stride = {1}, .padding = {2}, .dilation = {1}, .output_padding = {0}});
}

TEST(ConvTranspose1d, PaddingBeyondTheKernelCrops) {
  check_conv({.op = "conv_transpose1d", .batch = 1, .in_channels = 2, .out_channels = 3, .size = {7}, .kernel = {3},
              .stride = {2}, .padding = {3}, .dilation = {1}, .output_padding = {0}, .bias = true});
}

TEST(ConvTranspose1d, OutputPaddingBelowTheDilation) {
  check_conv({.op = "conv_transpose1d", .batch = 1, .in_channels = 3, .out_channels = 3, .size = {6}, .kernel = {2},
              .stride = {1}, .padding = {0}, .dilation = {2}, .output_padding = {1}});
}

TEST(ConvTranspose1d, Bf16) {
  check_conv({.op = "conv_transpose1d", .batch = 2, .in_channels = 4, .out_channels = 2, .size = {5}, .kernel = {3},
              .stride = {2}, .padding = {1}, .dilation = {1}, .output_padding = {1}, .bias = true, .dtype = "bf16"});
}

// ---- conv_transpose2d ----

TEST(ConvTranspose2d, AsymmetricStridedGroupedPaddedDilatedWithOutputPadding) {
  check_conv({.op = "conv_transpose2d", .batch = 2, .in_channels = 4, .out_channels = 8, .size = {5, 7},
              .kernel = {3, 5}, .stride = {2, 3}, .padding = {1, 2}, .dilation = {2, 1}, .output_padding = {1, 2},
              .groups = 4, .bias = true});
}

TEST(ConvTranspose2d, StrideOneNoBias) {
  check_conv({.op = "conv_transpose2d", .batch = 1, .in_channels = 3, .out_channels = 5, .size = {6, 4},
              .kernel = {3, 2}, .stride = {1, 1}, .padding = {0, 1}, .dilation = {1, 1}, .output_padding = {0, 0}});
}

TEST(ConvTranspose2d, F16) {
  check_conv({.op = "conv_transpose2d", .batch = 1, .in_channels = 6, .out_channels = 4, .size = {4, 5},
              .kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .dilation = {1, 1}, .output_padding = {1, 0},
              .groups = 2, .bias = true, .dtype = "f16"});
}

// ---- conv_transpose3d ----

TEST(ConvTranspose3d, AsymmetricStridedPaddedDilatedGroupedWithOutputPaddingAndBias) {
  check_conv({.op = "conv_transpose3d", .batch = 1, .in_channels = 4, .out_channels = 6, .size = {3, 4, 5},
              .kernel = {2, 3, 1}, .stride = {2, 1, 2}, .padding = {1, 1, 0}, .dilation = {1, 2, 1},
              .output_padding = {1, 0, 1}, .groups = 2, .bias = true});
}

TEST(ConvTranspose3d, SquareKernelNoBias) {
  check_conv({.op = "conv_transpose3d", .batch = 2, .in_channels = 2, .out_channels = 3, .size = {3, 3, 4},
              .kernel = {3, 3, 3}, .stride = {2, 2, 2}, .padding = {1, 1, 1}, .dilation = {1, 1, 1},
              .output_padding = {0, 0, 0}});
}

// ---- depthwise_separable_conv2d ----

struct SeparableCase {
  int64_t batch, channels, out_channels;
  std::vector<int64_t> size, kernel, stride, padding, dilation;
  bool bias = false;
  std::string dtype = "f32";

  std::string spec() const {
    return "depthwise_separable_conv2d:batch=" + std::to_string(batch) + ",in_channels=" + std::to_string(channels) +
           ",out_channels=" + std::to_string(out_channels) + ",size=" + join_shape(size) +
           ",kernel=" + join_shape(kernel) + ",stride=" + join_shape(stride) + ",padding=" + join_shape(padding) +
           ",dilation=" + join_shape(dilation) + ",bias=" + (bias ? "true" : "false") + ",dtype=" + dtype;
  }
};

void check_separable(const SeparableCase& c) {
  SCOPED_TRACE(c.spec());
  OpRun run = run_op(c.spec(), 11);
  // Inputs in torch's parameter order: X, depthwise weight (and bias), pointwise weight (and bias).
  int arg = 0;
  std::vector<double> x = to_doubles(run.arg(arg++));
  std::vector<double> wd = to_doubles(run.arg(arg++));
  std::vector<double> bd = c.bias ? to_doubles(run.arg(arg++)) : std::vector<double>{};
  ASSERT_EQ(run.arg(arg).shape(), (std::vector<int64_t>{c.out_channels, c.channels, 1, 1}));
  std::vector<double> wp = to_doubles(run.arg(arg++));
  std::vector<double> bp = c.bias ? to_doubles(run.arg(arg++)) : std::vector<double>{};

  ConvCase depthwise{.op = "conv2d", .batch = c.batch, .in_channels = c.channels, .out_channels = c.channels,
                     .size = c.size, .kernel = c.kernel, .stride = c.stride, .padding = c.padding,
                     .dilation = c.dilation, .groups = c.channels, .bias = c.bias};
  Reference mid = reference_conv(depthwise, x, wd, bd);
  std::vector<int64_t> mid_shape = output_shape(depthwise);
  ConvCase pointwise{.op = "conv2d", .batch = c.batch, .in_channels = c.channels, .out_channels = c.out_channels,
                     .size = {mid_shape[2], mid_shape[3]}, .kernel = {1, 1}, .stride = {1, 1}, .padding = {0, 0},
                     .dilation = {1, 1}, .bias = c.bias};
  Reference ref = reference_conv(pointwise, mid.values, wp, bp);
  ASSERT_EQ(run.output(0).shape(), output_shape(pointwise));
  // The depthwise result is rounded to dtype before the pointwise sum: each of its values
  // carries one rounding, which the pointwise sum scales by at most its magnitude.
  ConvTolerance tol = tolerance_for(c.dtype);
  double atol = (tol.atol_per_magnitude + tol.unit_roundoff) * std::max(1.0, ref.magnitude);
  EXPECT_TRUE(all_close(run.output(0), ref.values, tol.rtol, atol));
}

TEST(DepthwiseSeparableConv2d, PaddedWithBias) {
  check_separable({.batch = 2, .channels = 3, .out_channels = 5, .size = {7, 6}, .kernel = {3, 3}, .stride = {1, 1},
                   .padding = {1, 1}, .dilation = {1, 1}, .bias = true});
}

TEST(DepthwiseSeparableConv2d, StridedDilatedAsymmetricNoBias) {
  check_separable({.batch = 1, .channels = 4, .out_channels = 3, .size = {9, 11}, .kernel = {3, 2}, .stride = {2, 1},
                   .padding = {2, 0}, .dilation = {2, 3}});
}

TEST(DepthwiseSeparableConv2d, F16) {
  check_separable({.batch = 1, .channels = 4, .out_channels = 2, .size = {5, 5}, .kernel = {3, 3}, .stride = {1, 1},
                   .padding = {1, 1}, .dilation = {1, 1}, .bias = true, .dtype = "f16"});
}

// ---- loop nest shape ----

std::vector<int64_t> reduce_extents(const ir::BlockNode* block) {
  std::vector<int64_t> extents;
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind == ir::IterKind::kReduce) extents.push_back(ir::as_const_int(iv.dom.extent).value_or(-1));
  }
  return extents;
}

TEST(ConvStages, UnitReductionAxesAreLeftOut) {
  auto make = [](std::string_view spec) { return OpRegistry::global().make_workload(spec).func; };
  // Depthwise: only the taps; pointwise: only the channels; general: channels then taps.
  ir::PrimFunc depthwise = make("conv2d:in_channels=4,out_channels=4,groups=4,kernel=3x5,size=9x9");
  ASSERT_NE(find_block(depthwise->body, "Y"), nullptr);
  EXPECT_EQ(reduce_extents(find_block(depthwise->body, "Y")), (std::vector<int64_t>{3, 5}));
  ir::PrimFunc pointwise = make("conv2d:in_channels=6,out_channels=4,kernel=1x1");
  EXPECT_EQ(reduce_extents(find_block(pointwise->body, "Y")), (std::vector<int64_t>{6}));
  ir::PrimFunc general = make("conv3d:in_channels=4,out_channels=6,groups=2,kernel=3x1x2");
  EXPECT_EQ(reduce_extents(find_block(general->body, "Y")), (std::vector<int64_t>{2, 3, 2}));
}

TEST(ConvStages, PadAndUpsampleAreTheirOwnStages) {
  auto make = [](std::string_view spec) { return OpRegistry::global().make_workload(spec).func; };
  ir::PrimFunc padded = make("conv2d:padding=1x0,bias=true");
  EXPECT_NE(find_block(padded->body, "X_pad"), nullptr);
  EXPECT_NE(find_block(padded->body, "conv"), nullptr);
  EXPECT_NE(find_block(padded->body, "Y"), nullptr);
  EXPECT_EQ(find_block(make("conv2d:padding=0x0")->body, "X_pad"), nullptr);
  EXPECT_NE(find_block(make("conv_transpose2d:stride=2x2")->body, "X_upsample"), nullptr);
  EXPECT_EQ(find_block(make("conv_transpose1d:padding=2")->body, "X_upsample"), nullptr);
}

// ---- invalid parameters ----

TEST(ConvErrors, GroupsMustDivideBothChannelCounts) {
  std::string message = user_error_of("conv2d:in_channels=6,out_channels=4,groups=3");
  EXPECT_NE(message.find("op conv2d: parameter groups"), std::string::npos) << message;
  EXPECT_NE(message.find("out_channels=4"), std::string::npos) << message;
  message = user_error_of("conv_transpose1d:in_channels=5,out_channels=10,groups=2");
  EXPECT_NE(message.find("op conv_transpose1d: parameter groups"), std::string::npos) << message;
}

TEST(ConvErrors, SpatialParametersNeedOneEntryPerDimension) {
  std::string message = user_error_of("conv2d:kernel=3");
  EXPECT_NE(message.find("op conv2d: parameter kernel: has 1 entries but a 2D convolution needs 2"), std::string::npos)
      << message;
  message = user_error_of("conv3d:stride=1x1");
  EXPECT_NE(message.find("parameter stride"), std::string::npos) << message;
  message = user_error_of("conv_transpose2d:output_padding=1x1x1");
  EXPECT_NE(message.find("parameter output_padding"), std::string::npos) << message;
}

TEST(ConvErrors, KernelLargerThanThePaddedInput) {
  std::string message = user_error_of("conv1d:size=5,kernel=3,dilation=3");
  EXPECT_NE(message.find("parameter kernel"), std::string::npos) << message;
  EXPECT_NE(message.find("spans 7 but the padded input has 5"), std::string::npos) << message;
  message = user_error_of("depthwise_separable_conv2d:size=4x4,kernel=7x3,padding=1x1");
  EXPECT_NE(message.find("parameter kernel"), std::string::npos) << message;
}

TEST(ConvErrors, OutputPaddingMustBeBelowStrideOrDilation) {
  std::string message = user_error_of("conv_transpose2d:stride=2x1,output_padding=1x1");
  EXPECT_NE(message.find("op conv_transpose2d: parameter output_padding"), std::string::npos) << message;
  EXPECT_NE(message.find("dimension 1"), std::string::npos) << message;
  EXPECT_EQ(user_error_of("conv_transpose2d:stride=1x1,dilation=2x2,output_padding=1x1"), "(no error)");
}

TEST(ConvErrors, TransposedPaddingThatLeavesNoOutput) {
  std::string message = user_error_of("conv_transpose1d:size=2,kernel=2,padding=2");
  EXPECT_NE(message.find("parameter padding"), std::string::npos) << message;
}

TEST(ConvErrors, NegativePaddingIsRejectedByTheParser) {
  EXPECT_NE(user_error_of("conv2d:padding=-1x0").find("parameter padding"), std::string::npos);
  EXPECT_NE(user_error_of("conv2d:stride=0x1").find("parameter stride"), std::string::npos);
}

}  // namespace
}  // namespace dragon::ops
