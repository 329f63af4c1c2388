// Fused ops (matmul_bias_act, add_layer_norm, add_rms_norm) against plain double-precision
// references written here, their 16-bit variants, and parameter errors.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <string>
#include <vector>

#include "dragon/support/error.h"
#include "unit/ops/op_test_util.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {

using interp::Distribution;
using tensor::HostTensor;
using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::user_error_of;
using testing::round_to;

// Parameter order of every builder here: inputs as declared, then the outputs.
constexpr int kX = 0;

double activate(const std::string& act, double v) {
  if (act == "relu") return v > 0 ? v : 0.0;
  if (act == "gelu") return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  if (act == "silu") return v / (1.0 + std::exp(-v));
  if (act == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
  if (act == "hardsigmoid") return std::clamp(v / 6.0 + 0.5, 0.0, 1.0);
  if (act == "hardswish") return v * std::clamp(v + 3.0, 0.0, 6.0) / 6.0;
  return v;
}

// `value` rounded to `dtype` (what storing it in a tensor of that type gives).

// ---------------------------------------------------------------- matmul_bias_act

std::vector<double> matmul_bias_act_reference(const OpRun& run, int64_t m, int64_t n, int64_t k, const std::string& act,
                                              bool trans_w = false) {
  const HostTensor& x = run.arg(kX);
  const HostTensor& w = run.arg(1);
  const HostTensor& bias = run.arg(2);
  std::vector<double> out(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias.get(j);
      for (int64_t r = 0; r < k; ++r) acc += x.get(i * k + r) * w.get(trans_w ? j * k + r : r * n + j);
      out[i * n + j] = activate(act, acc);
    }
  }
  return out;
}

TEST(FusedMatmulBiasAct, EveryActivationOnOddShapes) {
  for (std::string act : {"none", "relu", "gelu", "silu", "sigmoid", "hardsigmoid", "hardswish"}) {
    std::string spec = "matmul_bias_act:m=5,n=7,k=9,activation=" + act;
    OpRun run = run_op(spec, 61);
    EXPECT_TRUE(all_close(run.output(), matmul_bias_act_reference(run, 5, 7, 9, act), 1e-5, 1e-5)) << spec;
  }
}

TEST(FusedMatmulBiasAct, DefaultsAndSmallK) {
  OpRun defaults = run_op("matmul_bias_act", 62);
  EXPECT_TRUE(all_close(defaults.output(), matmul_bias_act_reference(defaults, 64, 64, 64, "relu"), 1e-5, 1e-4));
  // K = 1 (the bottom MLP's small-K shape, scaled down): the bias dominates.
  OpRun small_k = run_op("matmul_bias_act:m=3,n=4,k=1,activation=gelu", 63, Distribution::kEdge);
  EXPECT_TRUE(all_close(small_k.output(), matmul_bias_act_reference(small_k, 3, 4, 1, "gelu"), 1e-5, 1e-6));
}

TEST(FusedMatmulBiasAct, LinearLayoutWeight) {
  OpRun run = run_op("matmul_bias_act:m=4,n=6,k=5,activation=silu,trans_w=true", 66);
  EXPECT_EQ(run.arg(1).shape(), (std::vector<int64_t>{6, 5}));
  EXPECT_TRUE(all_close(run.output(), matmul_bias_act_reference(run, 4, 6, 5, "silu", true), 1e-5, 1e-5));
}

TEST(FusedMatmulBiasAct, HalfAndBfloatAccumulateInF32) {
  for (std::string act : {"relu", "gelu", "silu", "sigmoid", "hardswish"}) {
    std::string shape = "matmul_bias_act:m=6,n=5,k=32,activation=" + act;
    OpRun f16 = run_op(shape + ",dtype=f16", 64);
    EXPECT_TRUE(all_close(f16.output(), matmul_bias_act_reference(f16, 6, 5, 32, act), 2e-3, 2e-3)) << act;
    OpRun bf16 = run_op(shape + ",dtype=bf16", 65);
    EXPECT_TRUE(all_close(bf16.output(), matmul_bias_act_reference(bf16, 6, 5, 32, act), 1.6e-2, 1.6e-2)) << act;
  }
}

TEST(FusedMatmulBiasAct, BadActivationNamesTheParameter) {
  std::string message = user_error_of("matmul_bias_act:activation=tanh");
  EXPECT_NE(message.find("activation"), std::string::npos) << message;
  EXPECT_NE(message.find("relu"), std::string::npos) << message;
}

// ---------------------------------------------------------------- add_layer_norm / add_rms_norm

struct NormReference {
  std::vector<double> out;
  std::vector<double> sum;  // x + residual, rounded to the element type
};

// torch: h = x + residual (in the element type), then layer_norm(h, weight, bias, eps)
// with the biased variance, or rms_norm(h, weight, eps).
NormReference norm_reference(const OpRun& run, int64_t rows, int64_t dim, double eps, bool layer_norm) {
  const HostTensor& x = run.arg(kX);
  const HostTensor& residual = run.arg(1);
  const HostTensor& weight = run.arg(2);
  NormReference ref;
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<double> h(dim);
    for (int64_t j = 0; j < dim; ++j) h[j] = round_to(x.dtype(), x.get(i * dim + j) + residual.get(i * dim + j));
    ref.sum.insert(ref.sum.end(), h.begin(), h.end());
    double mean = 0, square = 0;
    for (double v : h) mean += v;
    mean = layer_norm ? mean / static_cast<double>(dim) : 0.0;
    for (double v : h) square += (v - mean) * (v - mean);
    double inv = 1.0 / std::sqrt(square / static_cast<double>(dim) + eps);
    for (int64_t j = 0; j < dim; ++j) {
      double y = (h[j] - mean) * inv * weight.get(j);
      if (layer_norm) y += run.arg(3).get(j);
      ref.out.push_back(y);
    }
  }
  return ref;
}

TEST(FusedAddNorm, LayerNormMatchesTorch) {
  OpRun run = run_op("add_layer_norm:rows=5,dim=37", 71);
  EXPECT_TRUE(all_close(run.output(), norm_reference(run, 5, 37, 1e-5, true).out, 1e-4, 1e-4));
}

TEST(FusedAddNorm, LayerNormOnALargeCommonOffset) {
  // 100 + N(0, 1) everywhere, so h ~ 200 with variance ~ 2 and weight, bias ~ 100. The
  // f32 mean of 64 such values is off by ~1e-4, which weight ~ 100 turns into ~1e-2 in the
  // output; a one-pass E[h^2] - E[h]^2 variance would be off by ~1% and miss by ~1.
  OpRun run = run_op("add_layer_norm:rows=4,dim=64", 72, Distribution::kOffset);
  EXPECT_TRUE(all_close(run.output(), norm_reference(run, 4, 64, 1e-5, true).out, 1e-4, 2e-2));
}

TEST(FusedAddNorm, RmsNormMatchesTorch) {
  OpRun run = run_op("add_rms_norm:rows=6,dim=33", 73);
  EXPECT_TRUE(all_close(run.output(), norm_reference(run, 6, 33, 1e-5, false).out, 1e-4, 1e-4));
}

TEST(FusedAddNorm, EpsIsAddedToTheVariance) {
  // eps = 4 against unit-scale variance: a builder that dropped or misplaced eps fails.
  OpRun layer = run_op("add_layer_norm:rows=3,dim=8,eps=4", 74);
  EXPECT_TRUE(all_close(layer.output(), norm_reference(layer, 3, 8, 4.0, true).out, 1e-5, 1e-5));
  OpRun rms = run_op("add_rms_norm:rows=3,dim=8,eps=4", 75);
  EXPECT_TRUE(all_close(rms.output(), norm_reference(rms, 3, 8, 4.0, false).out, 1e-5, 1e-5));
}

TEST(FusedAddNorm, ReturnSumOutputsTheResidualStream) {
  for (std::string op : {"add_layer_norm", "add_rms_norm"}) {
    OpRun run = run_op(op + ":rows=4,dim=16,return_sum=true", 76);
    NormReference ref = norm_reference(run, 4, 16, 1e-5, op == "add_layer_norm");
    EXPECT_TRUE(all_close(run.output(0), ref.out, 1e-4, 1e-4)) << op;
    EXPECT_TRUE(all_close(run.output(1), ref.sum, 0, 0)) << op;
  }
}

TEST(FusedAddNorm, HalfAndBfloatComputeStatisticsInF32) {
  for (std::string op : {"add_layer_norm", "add_rms_norm"}) {
    bool layer = op == "add_layer_norm";
    OpRun f16 = run_op(op + ":rows=4,dim=48,dtype=f16,return_sum=true", 77);
    NormReference ref16 = norm_reference(f16, 4, 48, 1e-5, layer);
    EXPECT_TRUE(all_close(f16.output(0), ref16.out, 3e-3, 3e-3)) << op;
    EXPECT_TRUE(all_close(f16.output(1), ref16.sum, 0, 0)) << op;
    OpRun bf16 = run_op(op + ":rows=4,dim=48,dtype=bf16", 78);
    EXPECT_TRUE(all_close(bf16.output(), norm_reference(bf16, 4, 48, 1e-5, layer).out, 2e-2, 2e-2)) << op;
  }
}

TEST(FusedAddNorm, NegativeEpsNamesTheParameter) {
  for (std::string op : {"add_layer_norm", "add_rms_norm"}) {
    std::string message = user_error_of(op + ":eps=-1e-5");
    EXPECT_NE(message.find("parameter eps"), std::string::npos) << message;
    EXPECT_NE(message.find(op), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace dragon::ops
