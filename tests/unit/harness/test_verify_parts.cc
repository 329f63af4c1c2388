// The pieces of verification on their own: the f64 twin, tolerances, the comparison's
// classes of bad elements, the sentinel, KernelBench's allclose, secret seeds, renderings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "dragon/harness/f64_promotion.h"
#include "dragon/harness/input_siblings.h"
#include "dragon/harness/kernelbench_check.h"
#include "dragon/harness/output_comparison.h"
#include "dragon/harness/output_prefill.h"
#include "dragon/harness/reference.h"
#include "dragon/harness/tolerance.h"
#include "dragon/harness/verify.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "harness_test_util.h"

namespace dragon::harness {
namespace {

using tensor::HostTensor;
using testing::interpreter_candidate;
using testing::op_function;

HostTensor vector_of(ir::DataType dtype, std::vector<double> values) {
  HostTensor t(dtype, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.set(static_cast<int64_t>(i), values[i]);
  return t;
}

TEST(F64Promotion, PromotesEveryFloatBufferAndKeepsIntegers) {
  ir::PrimFunc func = op_function("embedding_bag:dtype=f16");
  ir::PrimFunc twin = promote_floats_to_f64(func);
  ASSERT_EQ(twin->params.size(), func->params.size());
  for (size_t p = 0; p < func->params.size(); ++p) {
    ir::DataType before = func->params[p].buffer->dtype, after = twin->params[p].buffer->dtype;
    EXPECT_EQ(after, before.is_float() ? ir::DataType::f64() : before) << func->params[p].buffer->name;
    EXPECT_EQ(twin->params[p].role, func->params[p].role);
    EXPECT_EQ(twin->params[p].domain, func->params[p].domain);
  }
}

// The twin of an f16 function computes what the registry's f64 instance computes.
TEST(F64Promotion, TwinOfA16BitFunctionMatchesTheF64Instance) {
  for (std::string op : {"softmax:shape=4x33", "layer_norm:shape=3x40", "matmul:m=5,n=6,k=70"}) {
    SCOPED_TRACE(op);
    ir::PrimFunc twin = promote_floats_to_f64(op_function(op + ",dtype=f16"));
    ir::PrimFunc f64 = op_function(op + ",dtype=f64");
    std::vector<HostTensor> args = interp::make_arguments(f64, 5, interp::Distribution::kNormal);
    std::vector<HostTensor> expected = args;
    interp::run(f64, expected);
    interp::run(twin, args);
    for (size_t p = 0; p < args.size(); ++p) {
      if (f64->params[p].role == ir::ParamRole::kInput) continue;
      EXPECT_LE(normalized_difference(args[p], expected[p]), 1e-12);
    }
  }
}

TEST(Reference, CalibratesTolerancesFromTheF32Error) {
  ir::PrimFunc func = op_function("matmul:m=8,n=8,k=512");
  Reference reference(func);
  std::vector<ReferenceOutput> out = reference.compute(interp::make_arguments(func, 3, interp::Distribution::kOffset));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "C");
  EXPECT_EQ(out[0].exact.dtype(), ir::DataType::f64());
  // A long f32 sum of large positive products has a visible error, well below 1e-5.
  EXPECT_GT(out[0].reference_error, 1e-9);
  EXPECT_LT(out[0].reference_error, 1e-5);
  EXPECT_EQ(out[0].tolerance, calibrated_tolerance(ir::DataType::f32(), out[0].reference_error));
}

TEST(Tolerance, FloorsPerTypeAndMargin) {
  EXPECT_EQ(tolerance_floor(ir::DataType::f32()), 1e-5);
  EXPECT_EQ(tolerance_floor(ir::DataType::f16()), 2e-3);
  EXPECT_EQ(tolerance_floor(ir::DataType::bf16()), 1.6e-2);
  EXPECT_EQ(tolerance_floor(ir::DataType::i32()), 0);
  EXPECT_EQ(calibrated_tolerance(ir::DataType::f32(), 1e-8), 1e-5);
  EXPECT_EQ(calibrated_tolerance(ir::DataType::f32(), 1e-4), kReferenceErrorMargin * 1e-4);
  EXPECT_EQ(calibrated_tolerance(ir::DataType::i64(), 0.5), 0);
}

TEST(OutputComparison, NormalisesByTheReferencesScale) {
  HostTensor exact = vector_of(ir::DataType::f64(), {1e-6, -2e-6, 4e-6});
  HostTensor native = vector_of(ir::DataType::f32(), {1e-6, -2e-6, 4e-6});
  // 1% of the scale off on one element: wrong at 1e-3, right at 2e-2, although every
  // absolute difference is below 1e-7.
  HostTensor actual = vector_of(ir::DataType::f32(), {1e-6, -2e-6 + 4e-8, 4e-6});
  OutputComparison strict = compare_output(native, exact, actual, 1e-3);
  EXPECT_EQ(strict.wrong, 1);
  ASSERT_EQ(strict.first_wrong.size(), 1u);
  EXPECT_EQ(strict.first_wrong[0].index, 1);
  EXPECT_NEAR(strict.normalized_error, 0.01, 1e-4);
  EXPECT_TRUE(compare_output(native, exact, actual, 2e-2).ok());
}

TEST(OutputComparison, ClassifiesUnwrittenNanAndWrongElements) {
  HostTensor exact = vector_of(ir::DataType::f64(), {1, 2, 3, 4, 5});
  HostTensor native = vector_of(ir::DataType::f32(), {1, 2, 3, 4, 5});
  HostTensor prefill(ir::DataType::f32(), {5});
  fill_sentinel(prefill);
  HostTensor actual = prefill;
  actual.set(0, 1);
  actual.set(1, std::numeric_limits<double>::quiet_NaN());  // a written NaN is not the sentinel
  actual.set(2, std::numeric_limits<double>::infinity());
  actual.set(3, 4.5);
  OutputComparison c = compare_output(native, exact, actual, 1e-5, &prefill);
  EXPECT_EQ(c.unwritten, 1);
  EXPECT_EQ(c.first_unwritten.at(0).index, 4);
  EXPECT_EQ(c.non_finite, 2);
  EXPECT_EQ(c.wrong, 1);
  EXPECT_EQ(c.first_wrong.at(0).index, 3);
  std::string text = describe(c, actual.shape());
  EXPECT_NE(text.find("1 of 5 elements never written"), std::string::npos) << text;
  EXPECT_NE(text.find("[3] expected 4, got 4.5"), std::string::npos) << text;
  // Without a pre-fill the sentinel is just a NaN.
  EXPECT_EQ(compare_output(native, exact, actual, 1e-5).non_finite, 3);
}

// Where the reference overflows in its own type, the candidate must agree (or be right
// in f64); where it is NaN, NaN is right.
TEST(OutputComparison, SpecialValuesOfTheNativeReference) {
  double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor exact = vector_of(ir::DataType::f64(), {1e39, nan, 1});
  HostTensor native = vector_of(ir::DataType::f32(), {inf, nan, 1});
  EXPECT_TRUE(compare_output(native, exact, vector_of(ir::DataType::f32(), {inf, nan, 1}), 1e-5).ok());
  EXPECT_EQ(compare_output(native, exact, vector_of(ir::DataType::f32(), {-inf, 0, 1}), 1e-5).non_finite, 2);
  EXPECT_EQ(compare_output(native, exact, vector_of(ir::DataType::f32(), {inf, nan, inf}), 1e-5).non_finite, 1);
}

TEST(OutputComparison, FormatsIndicesAsCoordinates) {
  EXPECT_EQ(format_index({4, 5, 6}, 6 * 5 + 6 + 2), "[1, 1, 2]");
  EXPECT_EQ(format_index({}, 0), "[]");
}

TEST(OutputPrefill, SentinelIsANanNoArithmeticProduces) {
  for (ir::DataType dtype : {ir::DataType::f32(), ir::DataType::f16(), ir::DataType::bf16(), ir::DataType::f64()}) {
    SCOPED_TRACE(ir::to_string(dtype));
    HostTensor sentinel(dtype, {3}), computed(dtype, {3});
    fill_sentinel(sentinel);
    EXPECT_TRUE(std::isnan(sentinel.get(0)));
    computed.set(0, std::numeric_limits<double>::quiet_NaN());
    computed.set(1, 0.0 * std::numeric_limits<double>::infinity());
    computed.set(2, -std::numeric_limits<double>::quiet_NaN());
    for (int64_t i = 0; i < 3; ++i) EXPECT_FALSE(same_bits(sentinel, computed, i)) << i;
  }
}

TEST(OutputPrefill, GarbageIsFiniteAndSeeded) {
  HostTensor a(ir::DataType::f16(), {64}), b(ir::DataType::f16(), {64}), c(ir::DataType::f16(), {64});
  fill_garbage(a, 1);
  fill_garbage(b, 1);
  fill_garbage(c, 2);
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_FALSE(same_bits(a, c));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    EXPECT_TRUE(std::isfinite(a.get(i)));
    EXPECT_NE(a.get(i), 0.0);
  }
}

TEST(KernelBenchCheck, IsTorchAllclose) {
  HostTensor reference = vector_of(ir::DataType::f32(), {1, 100, 0});
  // |r - c| <= atol + rtol * |c|, with c the candidate.
  EXPECT_TRUE(kernelbench_allclose(reference, vector_of(ir::DataType::f32(), {1.015, 100.9, 0.005}), 1e-2, 1e-2));
  EXPECT_FALSE(kernelbench_allclose(reference, vector_of(ir::DataType::f32(), {1.03, 100, 0}), 1e-2, 1e-2));
  EXPECT_FALSE(kernelbench_allclose(reference, vector_of(ir::DataType::f32(), {1, 100, std::nan("")}), 1, 1));
  EXPECT_EQ(kernelbench_head_tolerance(ir::DataType::f32()), 1e-4);
  EXPECT_EQ(kernelbench_head_tolerance(ir::DataType::bf16()), 1e-2);
}

// Without a seed every verification draws its own; the candidate cannot know the inputs.
TEST(Verify, SeedsAreSecretUnlessGiven) {
  ir::PrimFunc func = op_function("relu:shape=4x8");
  auto candidate = interpreter_candidate(func);
  Verdict first = verify(func, *candidate), second = verify(func, *candidate);
  EXPECT_NE(first.seed, second.seed);
  EXPECT_NE(first.input_sets.at(0).seed, second.input_sets.at(0).seed);
  VerifyOptions options;
  options.seed = first.seed;
  Verdict again = verify(func, *candidate, options);
  ASSERT_EQ(again.input_sets.size(), first.input_sets.size());
  for (size_t i = 0; i < again.input_sets.size(); ++i) EXPECT_EQ(again.input_sets[i].seed, first.input_sets[i].seed);
}

TEST(Verify, UsesEveryDistributionAndSiblingsOfTheFirstTwo) {
  ir::PrimFunc func = op_function("relu:shape=4x8");
  auto candidate = interpreter_candidate(func);
  Verdict verdict = verify(func, *candidate);
  std::vector<std::string> labels;
  for (const InputSetReport& set : verdict.input_sets) labels.push_back(set.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"normal", "uniform", "offset", "edge", "rand",
                                              "normal, sibling 1 (1 element of X changed)",
                                              "uniform, sibling 2 (4 elements of X changed)",
                                              "normal, sibling 3 (1 element of X changed)",
                                              "uniform, sibling 4 (4 elements of X changed)"}));
  VerifyOptions none;
  none.sibling_sets = 0;
  EXPECT_EQ(verify(func, *candidate, none).input_sets.size(), 5u);
}

// A sibling shares all but its changed elements with its base, bit for bit; each change
// crosses zero (real inputs) or grows (positive ones); inputs of other domains and
// outputs are never changed; changes rotate over the inputs.
TEST(InputSiblings, ChangeAFewElementsOfOneInputAcrossZero) {
  ir::PrimFunc matmul = op_function("matmul:m=8,n=8,k=8");
  std::vector<std::vector<HostTensor>> bases = {interp::make_arguments(matmul, 1, interp::Distribution::kNormal),
                                                interp::make_arguments(matmul, 2, interp::Distribution::kUniform)};
  std::vector<InputSibling> siblings = make_siblings(matmul, bases, {"normal", "uniform"}, 99, 4);
  ASSERT_EQ(siblings.size(), 4u);
  for (size_t j = 0; j < siblings.size(); ++j) {
    const InputSibling& sibling = siblings[j];
    EXPECT_EQ(sibling.base, j % 2);
    EXPECT_EQ(sibling.changes.size(), j < 2 ? 1u : 4u) << "each input's first sibling changes one element";
    std::vector<HostTensor> args = bases[sibling.base];
    apply_sibling(sibling, args);
    int64_t changed = 0;
    for (size_t p = 0; p < args.size(); ++p) {
      for (int64_t i = 0; i < args[p].num_elements(); ++i) {
        if (same_bits(args[p], bases[sibling.base][p], i)) continue;
        ++changed;
        EXPECT_EQ(p, j % 2) << "sibling " << j << " changes input A, then B";
        const double before = bases[sibling.base][p].get(i), after = args[p].get(i);
        EXPECT_LT(before * after, 0.0) << "the change crosses zero";
        EXPECT_GT(std::fabs(after), std::fabs(before));
      }
    }
    EXPECT_EQ(changed, static_cast<int64_t>(sibling.changes.size()));
  }
  EXPECT_EQ(siblings[0].label, "normal, sibling 1 (1 element of A changed)");
  // Same seed, same siblings; another seed, other positions.
  EXPECT_EQ(make_siblings(matmul, bases, {"normal", "uniform"}, 99, 4)[3].changes[2].index,
            siblings[3].changes[2].index);
  EXPECT_TRUE(make_siblings(matmul, bases, {"normal", "uniform"}, 99, 0).empty());
}

// Indices, offsets, probabilities, integer codes and bools get siblings too, each change
// inside its input's domain, and every input gets one however many inputs there are.
TEST(InputSiblings, EveryInputChangesInsideItsDomain) {
  for (const char* spec : {"embedding_bag:num_embeddings=16,embedding_dim=4,batch=4,max_bag_length=4,num_indices=10,"
                           "per_sample_weights=true",
                           "kl_div_loss:shape=4x16", "table_batched_embedding:weights_dtype=i8",
                           "batch_norm:shape=2x4x3x3,training=false"}) {
    ir::PrimFunc func = op_function(spec);
    std::vector<size_t> inputs;
    for (size_t p = 0; p < func->params.size(); ++p) {
      if (func->params[p].role == ir::ParamRole::kInput) inputs.push_back(p);
    }
    ASSERT_EQ(perturbable_inputs(func), inputs) << spec;
    std::vector<std::vector<HostTensor>> bases = {interp::make_arguments(func, 3, interp::Distribution::kNormal)};
    std::vector<InputSibling> siblings = make_siblings(func, bases, {"normal"}, 7, 1);
    ASSERT_EQ(siblings.size(), 2 * inputs.size()) << spec << ": two siblings per input, more than the 1 asked for";
    for (size_t j = 0; j < siblings.size(); ++j) EXPECT_EQ(siblings[j].changes[0].param, inputs[j % inputs.size()]);
    for (int round = 0; round < 3; ++round) {
      for (const InputSibling& sibling : make_siblings(func, bases, {"normal"}, 100 + round, 8 * inputs.size())) {
        std::vector<HostTensor> args = bases[0];
        apply_sibling(sibling, args);
        ASSERT_FALSE(sibling.changes.empty());
        const size_t p = sibling.changes[0].param;
        const ir::Param& param = func->params[p];
        const HostTensor &before = bases[0][p], &after = args[p];
        int64_t changed = 0;
        for (int64_t i = 0; i < after.num_elements(); ++i) changed += same_bits(before, after, i) ? 0 : 1;
        EXPECT_EQ(changed, static_cast<int64_t>(sibling.changes.size())) << spec << ": " << sibling.label;
        const ir::ValueDomain& domain = param.domain;
        if (domain.kind == ir::ValueDomain::Kind::kIntRange) {
          for (int64_t i = 0; i < after.num_elements(); ++i) {
            EXPECT_GE(after.get_int(i), domain.lo) << sibling.label;
            EXPECT_LT(after.get_int(i), domain.hi) << sibling.label;
          }
        } else if (domain.kind == ir::ValueDomain::Kind::kOffsets) {
          const int64_t last = after.num_elements() - 1;
          EXPECT_EQ(after.get_int(0), 0);
          EXPECT_EQ(after.get_int(last), domain.total);
          for (int64_t i = 0; i < last; ++i) {
            EXPECT_GE(after.get_int(i + 1) - after.get_int(i), 0) << sibling.label;
            EXPECT_LE(after.get_int(i + 1) - after.get_int(i), domain.max_len) << sibling.label;
          }
        } else if (domain.kind == ir::ValueDomain::Kind::kSimplex) {
          const int64_t row = after.shape().back();
          for (int64_t start = 0; start < after.num_elements(); start += row) {
            std::vector<double> was, now;
            for (int64_t i = start; i < start + row; ++i) {
              was.push_back(before.get(i));
              now.push_back(after.get(i));
            }
            std::sort(was.begin(), was.end());
            std::sort(now.begin(), now.end());
            EXPECT_EQ(was, now) << sibling.label << ": a row's values are swapped, never changed";
          }
        } else if (domain.kind == ir::ValueDomain::Kind::kPositive) {
          for (int64_t i = 0; i < after.num_elements(); ++i) EXPECT_GT(after.get(i), 0.0) << sibling.label;
        }
      }
    }
  }
}

TEST(Verdict, RendersTextAndJson) {
  ir::PrimFunc func = op_function("relu:shape=4x8");
  auto zeros = make_function_candidate("zeros", [](std::vector<HostTensor>& args) {
    args[1].fill(0);
    return RunOutcome::success();
  });
  VerifyOptions options;
  options.seed = 11;
  Verdict verdict = verify(func, *zeros, options);
  std::string text = verdict.to_text();
  EXPECT_EQ(text.rfind("FAIL zeros on relu: wrong values", 0), 0u) << text;
  EXPECT_NE(text.find("seed 11"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(verdict.to_json());
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["trusted"], false);
  EXPECT_EQ(j["seed"], 11u);
  EXPECT_EQ(j["failures"][0]["kind"], "wrong_values");
  EXPECT_EQ(j["failures"][0]["input_set"], "normal");
  EXPECT_EQ(j["input_sets"].size(), verdict.input_sets.size());
  EXPECT_EQ(j["input_sets"][0]["outputs"][0]["name"], "relu");
  EXPECT_EQ(j["input_sets"][0]["outputs"][0]["ok"], false);
}

}  // namespace
}  // namespace dragon::harness
