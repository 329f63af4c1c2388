// Eager baselines of the elementwise, norm, reduce, loss families against the interpreter.
// Every op kind of these families at tiny shapes, each parameter variant (axes, keepdim,
// training/eval, affine, approximations, scan directions) and the 16-bit types torch runs
// on CPU; the tricky ones also on edge-case or offset inputs. f16 appears only where
// libtorch 1.13's CPU kernels have Half (most of these ops have it only on CUDA there);
// bf16 covers the 16-bit path everywhere else.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/bench/torch/eager_op_check.h"

namespace dragon::bench::testing {
namespace {

using interp::Distribution;

void expect_all(const std::vector<std::string>& specs, const EagerCheckOptions& options = {}) {
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    expect_eager_matches_interpreter(spec, options);
  }
}

EagerCheckOptions with(Distribution distribution) {
  EagerCheckOptions options;
  options.distribution = distribution;
  return options;
}

// ---- activation ----

TEST(EagerActivation, PointwiseOpsMatchInF32AndBf16) {
  for (const char* op : {"relu", "sigmoid", "tanh", "swish", "selu", "hardsigmoid", "hardswish", "softsign"}) {
    for (const char* dtype : {"f32", "bf16"}) {
      expect_all({std::string(op) + ":shape=3x5x7,dtype=" + dtype});
    }
  }
  expect_all({"softsign:shape=3x5x7,dtype=f16"});
}

TEST(EagerActivation, ParameterisedPointwiseOpsMatch) {
  expect_all({
      "leaky_relu:shape=4x16",
      "leaky_relu:shape=4x16,negative_slope=0.2,dtype=bf16",
      "gelu:shape=4x16,approximate=none",
      "gelu:shape=4x16,approximate=tanh",
      "gelu:shape=4x16,approximate=tanh,dtype=bf16",
      "gelu:shape=4x16,approximate=none,dtype=bf16",
      "softplus:shape=4x16",
      "softplus:shape=4x16,beta=2,threshold=1",
      "softplus:shape=4x16,beta=-0.5,threshold=3,dtype=bf16",
      "elu:shape=4x16",
      "elu:shape=4x16,alpha=0.5,dtype=bf16",
      "hardtanh:shape=4x16",
      "hardtanh:shape=4x16,min_val=-0.5,max_val=2,dtype=bf16",
  });
}

TEST(EagerActivation, PointwiseOpsMatchOnEdgeValues) {
  expect_all({"relu:shape=64", "sigmoid:shape=64", "tanh:shape=64", "swish:shape=64", "gelu:shape=64",
              "gelu:shape=64,approximate=tanh", "selu:shape=64", "softplus:shape=64", "softsign:shape=64",
              "elu:shape=64", "hardsigmoid:shape=64", "hardswish:shape=64", "leaky_relu:shape=64", "hardtanh:shape=64"},
             with(Distribution::kEdge));
}

TEST(EagerActivation, SoftmaxAndLogSoftmaxMatchAlongEveryAxis) {
  for (const char* op : {"softmax", "log_softmax"}) {
    std::string name = op;
    expect_all({name + ":shape=4x16", name + ":shape=4x16,axis=0", name + ":shape=3x5x7,axis=1",
                name + ":shape=3x5x7,axis=-1", name + ":shape=3x5x7,axis=2,dtype=bf16",
                name + ":shape=3x5x7,axis=0,dtype=bf16"});
    expect_all({name + ":shape=4x16", name + ":shape=3x5x7,axis=-3"}, with(Distribution::kEdge));
    expect_all({name + ":shape=4x16"}, with(Distribution::kOffset));
  }
}

// ---- norm ----

TEST(EagerNorm, BatchNormMatchesInTrainingAndEvalMode) {
  expect_all({
      "batch_norm:shape=3x4x5x5",
      "batch_norm:shape=3x4x5x5,training=false",
      "batch_norm:shape=4x6,eps=0.001",
      "batch_norm:shape=2x3x7,training=false,eps=0.1",
      "batch_norm:shape=3x4x5x5,dtype=bf16",
      "batch_norm:shape=3x4x5x5,training=false,dtype=bf16",
  });
  expect_all({"batch_norm:shape=3x4x5x5", "batch_norm:shape=3x4x5x5,training=false"}, with(Distribution::kOffset));
  expect_all({"batch_norm:shape=3x4x5x5"}, with(Distribution::kEdge));
}

TEST(EagerNorm, InstanceAndGroupNormMatch) {
  expect_all({
      "instance_norm:shape=2x3x4x5",
      "instance_norm:shape=2x3x4x5,affine=true",
      "instance_norm:shape=2x3x9,affine=true,eps=0.01",
      "instance_norm:shape=2x3x4x5,dtype=bf16",
      "group_norm:shape=2x6x4x5",
      "group_norm:shape=2x6x4x5,num_groups=3",
      "group_norm:shape=2x6x4x5,num_groups=1,eps=0.001",
      "group_norm:shape=2x6x4x5,num_groups=6",
      "group_norm:shape=2x4x9,num_groups=2,dtype=bf16",
  });
  expect_all({"instance_norm:shape=2x3x4x5", "group_norm:shape=2x6x4x5"}, with(Distribution::kOffset));
}

TEST(EagerNorm, LayerNormMatchesOverOneOrMoreTrailingDims) {
  expect_all({
      "layer_norm:shape=4x3x16",
      "layer_norm:shape=4x3x16,normalized_dims=2",
      "layer_norm:shape=4x3x16,normalized_dims=3,eps=0.001",
      "layer_norm:shape=4x3x16,elementwise_affine=false",
      "layer_norm:shape=4x3x16,dtype=bf16",
      "layer_norm:shape=4x3x16,normalized_dims=2,dtype=bf16",
  });
  expect_all({"layer_norm:shape=4x3x16"}, with(Distribution::kOffset));
  expect_all({"layer_norm:shape=4x3x16,normalized_dims=2"}, with(Distribution::kEdge));
}

TEST(EagerNorm, AxisNormsMatchAlongEveryAxis) {
  for (const char* op : {"rms_norm", "l1_norm", "l2_norm"}) {
    std::string name = op;
    expect_all({name + ":shape=3x8x5", name + ":shape=3x8x5,axis=0", name + ":shape=3x8x5,axis=-1",
                name + ":shape=4x16,axis=1"});
  }
  expect_all({"rms_norm:shape=2x4x3x3,eps=0.1"});
  expect_all({"rms_norm:shape=3x8x5", "l1_norm:shape=3x8x5", "l2_norm:shape=3x8x5"}, with(Distribution::kOffset));
  expect_all({"rms_norm:shape=3x8x5", "l1_norm:shape=3x8x5", "l2_norm:shape=3x8x5"}, with(Distribution::kEdge));
}

TEST(EagerNorm, AxisNormsMatchIn16BitTypes) {
  // KernelBench's compositions round x**2 (or |x|) and the mean or norm to f16/bf16 where
  // our PrimFuncs keep f32; those extra roundings stay within the default tolerance.
  for (const char* op : {"rms_norm", "l1_norm", "l2_norm", "frobenius_norm"}) {
    expect_all({std::string(op) + ":shape=3x8x5,dtype=bf16"});
  }
  for (const char* op : {"l1_norm", "l2_norm", "frobenius_norm"}) {
    expect_all({std::string(op) + ":shape=3x8x5,dtype=f16"});
  }
}

TEST(EagerNorm, FrobeniusNormMatches) {
  expect_all({"frobenius_norm:shape=2x3x4x5", "frobenius_norm:shape=16"});
  expect_all({"frobenius_norm:shape=2x3x4x5"}, with(Distribution::kEdge));
}

// ---- reduce ----

TEST(EagerReduce, ReductionsMatchAlongEveryAxisWithAndWithoutKeepdim) {
  for (const char* op : {"sum", "mean", "max", "min", "argmax", "argmin"}) {
    std::string name = op;
    expect_all({name + ":shape=3x8x5", name + ":shape=3x8x5,axis=0,keepdim=true", name + ":shape=3x8x5,axis=-1",
                name + ":shape=3x8x5,axis=2,keepdim=true", name + ":shape=3x8x5,dtype=bf16",
                name + ":shape=3x8x5,axis=0,dtype=f16"});
  }
}

TEST(EagerReduce, ReductionsMatchOnEdgeAndOffsetValues) {
  // Edge inputs repeat values: argmax/argmin must pick the first of equal extrema, as ours.
  for (const char* op : {"sum", "mean", "max", "min", "argmax", "argmin"}) {
    std::string name = op;
    expect_all({name + ":shape=4x16,axis=1", name + ":shape=16x4,axis=0,keepdim=true"}, with(Distribution::kEdge));
    expect_all({name + ":shape=4x16,axis=1"}, with(Distribution::kOffset));
  }
}

// ---- scan ----

TEST(EagerScan, CumsumMatchesInEveryDirection) {
  for (const char* variant : {"", ",reverse=true", ",exclusive=true", ",reverse=true,exclusive=true"}) {
    std::string v = variant;
    expect_all({"cumsum:shape=4x16" + v, "cumsum:shape=3x5x7,dim=0" + v, "cumsum:shape=3x5x7,dim=-1" + v,
                "cumsum:shape=4x16,dtype=bf16" + v});
  }
  expect_all({"cumsum:shape=4x16", "cumsum:shape=4x16,reverse=true,exclusive=true"}, with(Distribution::kOffset));
}

TEST(EagerScan, MaskedCumsumMatches) {
  expect_all({"masked_cumsum:shape=4x16", "masked_cumsum:shape=3x5x7,dim=0", "masked_cumsum:shape=3x5x7,dim=-1",
              "masked_cumsum:shape=4x16,dtype=bf16"});
}

TEST(EagerScan, CumprodMatchesForwardAndReversed) {
  // Factors in [-1, 1) shrink the running products, normal ones mostly let them grow:
  // both regimes, every direction.
  expect_all({"cumprod:shape=4x16", "cumprod:shape=4x16,reverse=true", "cumprod:shape=3x5x7,dim=0,reverse=true",
              "cumprod:shape=3x5x7,dim=-1", "cumprod:shape=4x16,dtype=bf16",
              "cumprod:shape=4x16,dtype=bf16,reverse=true"},
             with(Distribution::kUniform));
  expect_all({"cumprod:shape=4x16", "cumprod:shape=4x16,reverse=true"});
}

// ---- loss ----

TEST(EagerLoss, RegressionLossesMatch) {
  expect_all({
      "mse_loss:shape=4x16",
      "mse_loss:shape=3x5x7,dtype=f16",  // libtorch 1.13 has no bf16 mse_loss on CPU
      "smooth_l1_loss:shape=4x16",
      "smooth_l1_loss:shape=4x16,beta=0.5",
      "smooth_l1_loss:shape=4x16,beta=0",
      "smooth_l1_loss:shape=4x16,beta=2,dtype=bf16",
      "smooth_l1_loss:shape=4x16,beta=0.5,dtype=f16",
  });
  expect_all({"mse_loss:shape=4x16", "smooth_l1_loss:shape=4x16"}, with(Distribution::kOffset));
}

TEST(EagerLoss, CrossEntropyAndKlDivMatch) {
  expect_all({
      "cross_entropy_loss:batch=4,classes=10",
      "cross_entropy_loss:batch=7,classes=3",
      "cross_entropy_loss:batch=4,classes=10,dtype=bf16",
      "kl_div_loss:shape=4x16",
      "kl_div_loss:shape=3x5x7",
      "kl_div_loss:shape=4x16,dtype=bf16",
  });
  expect_all({"cross_entropy_loss:batch=4,classes=10"}, with(Distribution::kEdge));
}

TEST(EagerLoss, TripletMarginLossMatchesForEveryNormAndSwap) {
  expect_all({
      "triplet_margin_loss:batch=4,features=16",
      "triplet_margin_loss:batch=4,features=16,swap=true",
      "triplet_margin_loss:batch=4,features=16,p=1,margin=0.5",
      "triplet_margin_loss:batch=4,features=16,p=3,eps=0.001",
      "triplet_margin_loss:batch=4,features=16,margin=10,dtype=bf16",
  });
}

TEST(EagerLoss, HingeAndCosineSimilarityLossesMatch) {
  expect_all({
      "hinge_loss:batch=4,features=16",
      "hinge_loss:batch=4,features=16,dtype=bf16",
      "cosine_similarity_loss:batch=4,features=16",
      "cosine_similarity_loss:batch=4,features=16,eps=0.1",
      "cosine_similarity_loss:batch=4,features=16,dtype=bf16",
  });
  expect_all({"hinge_loss:batch=4,features=16"}, with(Distribution::kOffset));
}

}  // namespace
}  // namespace dragon::bench::testing
