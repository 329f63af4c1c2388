// Loss ops (MSE, smooth L1, cross entropy, KL divergence, triplet margin, hinge, cosine
// similarity) on the interpreter against plain double loops, their user errors and the
// KernelBench mapping. Not a test of the interpreter itself.
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
using testing::all_close;
using testing::OpRun;
using testing::run_op;
using testing::to_doubles;
using testing::user_error_of;
using testing::round_to;

// `value` rounded to `dtype` the way a stored tensor element is (round to nearest even).

// Relative tolerance of a loss: the f32 accumulation of `terms` values (one rounding
// each, bounded by the running total) for f32, the final rounding for 16-bit types.
double loss_rtol(const std::string& dtype, int64_t terms) {
  if (dtype == "f16") return 1e-3;
  if (dtype == "bf16") return 8e-3;
  return static_cast<double>(terms) * std::ldexp(1.0, -23) + 1e-6;
}

struct DTypeCase {
  std::string name;
  ir::DataType dtype;
};
const DTypeCase kHalfTypes[] = {{"f16", ir::DataType::f16()}, {"bf16", ir::DataType::bf16()}};

// ---- mse_loss ----

double reference_mse(const std::vector<double>& p, const std::vector<double>& t) {
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += (p[i] - t[i]) * (p[i] - t[i]);
  return sum / static_cast<double>(p.size());
}

TEST(LossMse, MatchesReference) {
  struct Case {
    std::string spec;
    Distribution distribution;
  };
  for (const Case& c :
       {Case{"mse_loss:shape=7x13", Distribution::kNormal}, Case{"mse_loss:shape=3x5x7", Distribution::kRand},
        Case{"mse_loss:shape=29", Distribution::kOffset}, Case{"mse_loss:shape=7x13", Distribution::kEdge}}) {
    OpRun run = run_op(c.spec, 3, c.distribution);
    ASSERT_TRUE(run.output().shape().empty()) << c.spec;
    double expected = reference_mse(to_doubles(run.arg(0)), to_doubles(run.arg(1)));
    EXPECT_TRUE(all_close(run.output(), {expected}, loss_rtol("f32", run.arg(0).num_elements()), 0)) << c.spec;
  }
}

TEST(LossMse, HalfTypes) {
  for (const DTypeCase& t : kHalfTypes) {
    OpRun run = run_op("mse_loss:shape=7x13,dtype=" + t.name, 4);
    ASSERT_EQ(run.output().dtype(), t.dtype);
    double expected = reference_mse(to_doubles(run.arg(0)), to_doubles(run.arg(1)));
    EXPECT_TRUE(all_close(run.output(), {expected}, loss_rtol(t.name, 91), 0)) << t.name;
  }
}

// ---- smooth_l1_loss ----

struct SmoothL1 {
  double value = 0;
  int64_t quadratic = 0, linear = 0;  // how many elements took each branch
};

SmoothL1 reference_smooth_l1(const std::vector<double>& p, const std::vector<double>& t, double beta) {
  SmoothL1 out;
  for (size_t i = 0; i < p.size(); ++i) {
    double z = std::fabs(p[i] - t[i]);
    if (z < beta) {
      out.value += 0.5 * z * z / beta;
      ++out.quadratic;
    } else {
      out.value += z - 0.5 * beta;
      ++out.linear;
    }
  }
  out.value /= static_cast<double>(p.size());
  return out;
}

TEST(LossSmoothL1, BothBranchesMatchReference) {
  for (double beta : {1.0, 0.5, 2.5}) {
    std::string spec = "smooth_l1_loss:shape=7x13,beta=" + std::to_string(beta);
    OpRun run = run_op(spec, 5);
    SmoothL1 expected = reference_smooth_l1(to_doubles(run.arg(0)), to_doubles(run.arg(1)), beta);
    // Normal data must reach both branches, or a wrong branch could go unseen.
    EXPECT_GT(expected.quadratic, 0) << spec;
    EXPECT_GT(expected.linear, 0) << spec;
    EXPECT_TRUE(all_close(run.output(), {expected.value}, loss_rtol("f32", 91), 0)) << spec;
  }
}

TEST(LossSmoothL1, BetaZeroIsL1AndLargeBetaIsQuadratic) {
  OpRun l1 = run_op("smooth_l1_loss:shape=3x5x7,beta=0", 6);
  std::vector<double> p = to_doubles(l1.arg(0)), t = to_doubles(l1.arg(1));
  double mean_abs = 0;
  for (size_t i = 0; i < p.size(); ++i) mean_abs += std::fabs(p[i] - t[i]);
  mean_abs /= static_cast<double>(p.size());
  EXPECT_TRUE(all_close(l1.output(), {mean_abs}, loss_rtol("f32", 105), 0));

  OpRun quadratic = run_op("smooth_l1_loss:shape=3x5x7,beta=100", 6);
  SmoothL1 expected = reference_smooth_l1(to_doubles(quadratic.arg(0)), to_doubles(quadratic.arg(1)), 100);
  EXPECT_EQ(expected.linear, 0);
  EXPECT_TRUE(all_close(quadratic.output(), {expected.value}, loss_rtol("f32", 105), 0));
}

TEST(LossSmoothL1, EdgeValuesAndHalfTypes) {
  OpRun edge = run_op("smooth_l1_loss:shape=7x13", 8, Distribution::kEdge);
  EXPECT_TRUE(all_close(edge.output(), {reference_smooth_l1(to_doubles(edge.arg(0)), to_doubles(edge.arg(1)), 1).value},
                        loss_rtol("f32", 91), 0));
  for (const DTypeCase& t : kHalfTypes) {
    OpRun run = run_op("smooth_l1_loss:shape=7x13,dtype=" + t.name, 9);
    ASSERT_EQ(run.output().dtype(), t.dtype);
    double expected = reference_smooth_l1(to_doubles(run.arg(0)), to_doubles(run.arg(1)), 1).value;
    EXPECT_TRUE(all_close(run.output(), {expected}, loss_rtol(t.name, 91), 0)) << t.name;
  }
}

// ---- cross_entropy_loss ----

double reference_cross_entropy(const OpRun& run, int64_t batch, int64_t classes) {
  std::vector<double> logits = to_doubles(run.arg(0));
  double total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t target = run.arg(1).get_int(b);
    EXPECT_TRUE(target >= 0 && target < classes) << target;
    double largest = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) largest = std::max(largest, logits[b * classes + c]);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(logits[b * classes + c] - largest);
    total += std::log(sum) + largest - logits[b * classes + target];
  }
  return total / static_cast<double>(batch);
}

TEST(LossCrossEntropy, MatchesReference) {
  struct Case {
    int64_t batch, classes;
    Distribution distribution;
  };
  for (const Case& c : {Case{7, 13, Distribution::kNormal}, Case{13, 7, Distribution::kRand},
                        Case{5, 1, Distribution::kNormal}, Case{7, 13, Distribution::kOffset}}) {
    std::string spec = "cross_entropy_loss:batch=" + std::to_string(c.batch) + ",classes=" + std::to_string(c.classes);
    OpRun run = run_op(spec, 10, c.distribution);
    ASSERT_EQ(run.arg(1).dtype(), ir::DataType::i64());
    double expected = reference_cross_entropy(run, c.batch, c.classes);
    EXPECT_TRUE(all_close(run.output(), {expected}, 1e-5, 1e-6)) << spec;
  }
}

// Logits of +-1000 overflow a naive exp: the row maximum must be subtracted first.
TEST(LossCrossEntropy, LargeLogitsStayFinite) {
  OpRun run = run_op("cross_entropy_loss:batch=7,classes=13", 12, Distribution::kEdge);
  double expected = reference_cross_entropy(run, 7, 13);
  ASSERT_TRUE(std::isfinite(expected));
  EXPECT_TRUE(all_close(run.output(), {expected}, 1e-5, 1e-5));
}

TEST(LossCrossEntropy, HalfTypes) {
  for (const DTypeCase& t : kHalfTypes) {
    OpRun run = run_op("cross_entropy_loss:batch=7,classes=13,dtype=" + t.name, 13);
    ASSERT_EQ(run.output().dtype(), t.dtype);
    EXPECT_TRUE(all_close(run.output(), {reference_cross_entropy(run, 7, 13)}, loss_rtol(t.name, 7), 0)) << t.name;
  }
}

// ---- kl_div_loss ----

// sum(xlogy(t, t) - t * log(p)) / shape[0], with log(p) rounded to the input type as
// torch.log stores it.
double reference_kl_div(const OpRun& run, ir::DataType dtype) {
  std::vector<double> p = to_doubles(run.arg(0)), t = to_doubles(run.arg(1));
  double total = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    double log_p = round_to(dtype, std::log(p[i]));
    total += (t[i] == 0 ? 0.0 : t[i] * std::log(t[i])) - t[i] * log_p;
  }
  return total / static_cast<double>(run.arg(0).shape()[0]);
}

TEST(LossKlDiv, MatchesReferenceOnProbabilities) {
  for (const std::string spec : {"kl_div_loss:shape=7x13", "kl_div_loss:shape=3x5x7", "kl_div_loss:shape=13"}) {
    OpRun run = run_op(spec, 14);
    // Both inputs must be probabilities along the last axis.
    for (int input = 0; input < 2; ++input) {
      std::vector<double> v = to_doubles(run.arg(input));
      int64_t row = run.arg(input).shape().back();
      for (size_t start = 0; start < v.size(); start += row) {
        double sum = 0;
        for (int64_t j = 0; j < row; ++j) {
          ASSERT_GT(v[start + j], 0.0);
          sum += v[start + j];
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
    }
    double expected = reference_kl_div(run, ir::DataType::f32());
    EXPECT_GT(expected, 0.0);
    EXPECT_TRUE(all_close(run.output(), {expected}, 1e-5, 1e-5)) << spec;
  }
}

TEST(LossKlDiv, HalfTypes) {
  for (const DTypeCase& t : kHalfTypes) {
    OpRun run = run_op("kl_div_loss:shape=7x13,dtype=" + t.name, 15);
    ASSERT_EQ(run.output().dtype(), t.dtype);
    EXPECT_TRUE(all_close(run.output(), {reference_kl_div(run, t.dtype)}, loss_rtol(t.name, 91), 1e-4)) << t.name;
  }
}

// ---- triplet_margin_loss ----

struct Triplet {
  double value = 0;
  int clamped = 0;  // rows whose hinge was cut to 0
};

Triplet reference_triplet(const OpRun& run, int64_t batch, int64_t features, double margin, double p, double eps,
                          bool swap) {
  std::vector<double> a = to_doubles(run.arg(0)), pos = to_doubles(run.arg(1)), neg = to_doubles(run.arg(2));
  auto distance = [&](const std::vector<double>& x, const std::vector<double>& y, int64_t b) {
    double sum = 0;
    for (int64_t f = 0; f < features; ++f)
      sum += std::pow(std::fabs(x[b * features + f] - y[b * features + f] + eps), p);
    return std::pow(sum, 1.0 / p);
  };
  Triplet out;
  for (int64_t b = 0; b < batch; ++b) {
    double d_neg = distance(a, neg, b);
    if (swap) d_neg = std::min(d_neg, distance(pos, neg, b));
    double hinge = margin + distance(a, pos, b) - d_neg;
    if (hinge < 0) ++out.clamped;
    out.value += std::max(hinge, 0.0);
  }
  out.value /= static_cast<double>(batch);
  return out;
}

TEST(LossTripletMargin, MatchesReference) {
  struct Case {
    std::string params;
    double margin, p, eps;
    bool swap;
  };
  for (const Case& c : {Case{"", 1.0, 2.0, 1e-6, false}, Case{",margin=0.25,p=1", 0.25, 1.0, 1e-6, false},
                        Case{",p=3", 1.0, 3.0, 1e-6, false}, Case{",swap=true", 1.0, 2.0, 1e-6, true},
                        Case{",eps=0.5,margin=0.5", 0.5, 2.0, 0.5, false}}) {
    std::string spec = "triplet_margin_loss:batch=7,features=13" + c.params;
    OpRun run = run_op(spec, 16);
    Triplet expected = reference_triplet(run, 7, 13, c.margin, c.p, c.eps, c.swap);
    EXPECT_TRUE(all_close(run.output(), {expected.value}, 1e-5, 1e-6)) << spec;
  }
}

// Rows on both sides of the margin, so the clamp is exercised both ways.
TEST(LossTripletMargin, ClampsSomeRowsToZero) {
  OpRun run = run_op("triplet_margin_loss:batch=13,features=7,margin=0.5", 17);
  Triplet expected = reference_triplet(run, 13, 7, 0.5, 2.0, 1e-6, false);
  EXPECT_GT(expected.clamped, 0);
  EXPECT_LT(expected.clamped, 13);
  EXPECT_TRUE(all_close(run.output(), {expected.value}, 1e-5, 1e-6));
}

TEST(LossTripletMargin, HalfTypes) {
  for (const DTypeCase& t : kHalfTypes) {
    OpRun run = run_op("triplet_margin_loss:batch=7,features=13,dtype=" + t.name, 18, Distribution::kRand);
    ASSERT_EQ(run.output().dtype(), t.dtype);
    Triplet expected = reference_triplet(run, 7, 13, 1.0, 2.0, 1e-6, false);
    EXPECT_TRUE(all_close(run.output(), {expected.value}, loss_rtol(t.name, 7), 1e-5)) << t.name;
  }
}

// ---- hinge_loss ----

double reference_hinge(const OpRun& run, int64_t batch, int64_t features) {
  std::vector<double> p = to_doubles(run.arg(0)), t = to_doubles(run.arg(1));
  double total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < features; ++f) total += std::max(1.0 - p[b * features + f] * t[f], 0.0);
  }
  return total / static_cast<double>(batch * features);
}

TEST(LossHinge, TargetsBroadcastAlongRows) {
  for (Distribution distribution : {Distribution::kNormal, Distribution::kRand}) {
    OpRun run = run_op("hinge_loss:batch=7,features=13", 19, distribution);
    ASSERT_EQ(run.arg(1).shape(), std::vector<int64_t>{13});
    bool has_minus = false, has_plus = false;
    for (double t : to_doubles(run.arg(1))) {
      EXPECT_TRUE(t == -1 || t == 0 || t == 1) << t;
      has_minus |= t == -1;
      has_plus |= t == 1;
    }
    EXPECT_TRUE(has_minus && has_plus);
    EXPECT_TRUE(all_close(run.output(), {reference_hinge(run, 7, 13)}, loss_rtol("f32", 91), 0));
  }
}

TEST(LossHinge, HalfTypes) {
  for (const DTypeCase& t : kHalfTypes) {
    OpRun run = run_op("hinge_loss:batch=7,features=13,dtype=" + t.name, 20);
    ASSERT_EQ(run.output().dtype(), t.dtype);
    EXPECT_TRUE(all_close(run.output(), {reference_hinge(run, 7, 13)}, loss_rtol(t.name, 91), 0)) << t.name;
  }
}

// ---- cosine_similarity_loss ----

// mean(1 - x.y / (max(|x|, eps) max(|y|, eps))) over rows.
double reference_cosine(const OpRun& run, int64_t batch, int64_t features, double eps) {
  std::vector<double> x = to_doubles(run.arg(0)), y = to_doubles(run.arg(1));
  double total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    double dot = 0, xx = 0, yy = 0;
    for (int64_t f = 0; f < features; ++f) {
      dot += x[b * features + f] * y[b * features + f];
      xx += x[b * features + f] * x[b * features + f];
      yy += y[b * features + f] * y[b * features + f];
    }
    total += 1 - dot / (std::max(std::sqrt(xx), eps) * std::max(std::sqrt(yy), eps));
  }
  return total / static_cast<double>(batch);
}

TEST(LossCosineSimilarity, MatchesReference) {
  OpRun run = run_op("cosine_similarity_loss:batch=7,features=13", 21);
  EXPECT_TRUE(all_close(run.output(), {reference_cosine(run, 7, 13, 1e-8)}, 1e-5, 1e-6));
  OpRun rand = run_op("cosine_similarity_loss:batch=13,features=7", 22, Distribution::kRand);
  EXPECT_TRUE(all_close(rand.output(), {reference_cosine(rand, 13, 7, 1e-8)}, 1e-5, 1e-6));
}

// Each norm is clamped on its own (torch's current rule), not their product: with norms
// near sqrt(13) ~ 3.6 and eps = 5 the two rules give different results.
TEST(LossCosineSimilarity, EachNormIsClampedByEps) {
  OpRun run = run_op("cosine_similarity_loss:batch=7,features=13,eps=5", 23);
  double expected = reference_cosine(run, 7, 13, 5);
  EXPECT_TRUE(all_close(run.output(), {expected}, 1e-5, 1e-6));
  // The product rule differs here by more than the tolerance, so the test tells them apart.
  std::vector<double> x = to_doubles(run.arg(0)), y = to_doubles(run.arg(1));
  double product_rule = 0;
  for (int64_t b = 0; b < 7; ++b) {
    double dot = 0, xx = 0, yy = 0;
    for (int64_t f = 0; f < 13; ++f) {
      dot += x[b * 13 + f] * y[b * 13 + f];
      xx += x[b * 13 + f] * x[b * 13 + f];
      yy += y[b * 13 + f] * y[b * 13 + f];
    }
    product_rule += 1 - dot / std::max(std::sqrt(xx) * std::sqrt(yy), 5.0);
  }
  EXPECT_GT(std::fabs(product_rule / 7 - expected), 1e-3);
}

TEST(LossCosineSimilarity, HalfTypes) {
  for (const DTypeCase& t : kHalfTypes) {
    OpRun run = run_op("cosine_similarity_loss:batch=7,features=13,dtype=" + t.name, 24);
    ASSERT_EQ(run.output().dtype(), t.dtype);
    EXPECT_TRUE(all_close(run.output(), {reference_cosine(run, 7, 13, 1e-8)}, loss_rtol(t.name, 7), 1e-5)) << t.name;
  }
}

// ---- every loss ----

TEST(LossOps, DefaultsRunToAFiniteScalar) {
  for (const std::string name : {"mse_loss", "smooth_l1_loss", "cross_entropy_loss", "kl_div_loss",
                                 "triplet_margin_loss", "hinge_loss", "cosine_similarity_loss"}) {
    OpRun run = run_op(name, 1);
    ASSERT_TRUE(run.output().shape().empty()) << name;
    ASSERT_EQ(run.output().num_elements(), 1) << name;
    EXPECT_TRUE(std::isfinite(run.output().get(0))) << name;
  }
}

TEST(LossErrors, InvalidParametersNameTheParameter) {
  struct Case {
    std::string spec, needle;
  };
  for (const Case& c :
       {Case{"smooth_l1_loss:beta=-1", "parameter beta"}, Case{"triplet_margin_loss:p=0", "parameter p"},
        Case{"triplet_margin_loss:p=-2", "parameter p"}, Case{"cosine_similarity_loss:eps=-1", "parameter eps"},
        Case{"cross_entropy_loss:classes=0", "parameter classes"},
        Case{"hinge_loss:features=0", "parameter features"}}) {
    std::string message = user_error_of(c.spec);
    EXPECT_NE(message.find(c.needle), std::string::npos) << c.spec << ": " << message;
  }
}

}  // namespace
}  // namespace dragon::ops
