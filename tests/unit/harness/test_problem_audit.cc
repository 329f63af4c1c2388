// The weak-problem audit: trivial outputs must fail our check on every problem, and the
// audit says which ones KernelBench's allclose on torch.rand would accept.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dragon/harness/problem_audit.h"
#include "dragon/harness/verify.h"
#include "harness_test_util.h"

namespace dragon::harness {
namespace {

using testing::interpreter_candidate;
using testing::op_function;

AuditOptions quick_options() {
  AuditOptions options;
  options.distributions = {interp::Distribution::kNormal, interp::Distribution::kRand};
  return options;
}

// KernelBench 23: softmax over a long row of torch.rand values. Every output is about
// 1.6 / row (below 1e-4 here), so zeros pass allclose at atol = 1e-4; our error is
// normalised by the output's own scale, so zeros are 100% off.
TEST(ProblemAudit, ZerosPassKernelBenchOnALongSoftmaxButNotOurs) {
  ProblemAudit audit = audit_problem(op_function("softmax:shape=2x20000"), quick_options());
  const TrivialOutputAudit* zeros = audit.find("zeros");
  ASSERT_NE(zeros, nullptr) << audit.to_text();
  EXPECT_TRUE(zeros->passes_kernelbench) << audit.to_text();
  EXPECT_TRUE(zeros->passes_kernelbench_paper) << audit.to_text();
  EXPECT_FALSE(zeros->passes_ours) << audit.to_text();
  EXPECT_TRUE(audit.weak_under_kernelbench());
  EXPECT_FALSE(audit.weak()) << audit.to_text();
}

// A short row: zeros pass only the paper's 1e-2, not HEAD's 1e-4.
TEST(ProblemAudit, ToleranceDecidesKernelBenchOnAShortSoftmax) {
  ProblemAudit audit = audit_problem(op_function("softmax:shape=4x512"), quick_options());
  const TrivialOutputAudit* zeros = audit.find("zeros");
  ASSERT_NE(zeros, nullptr);
  EXPECT_FALSE(zeros->passes_kernelbench) << audit.to_text();
  EXPECT_TRUE(zeros->passes_kernelbench_paper) << audit.to_text();
  EXPECT_FALSE(zeros->passes_ours);
}

// ReLU on torch.rand is the identity: KernelBench accepts `return x`; signed inputs do not.
TEST(ProblemAudit, IdentityPassesKernelBenchOnReluButNotOurs) {
  ProblemAudit audit = audit_problem(op_function("relu:shape=16x64"), quick_options());
  const TrivialOutputAudit* identity = audit.find("input X passed through");
  ASSERT_NE(identity, nullptr) << audit.to_text();
  EXPECT_TRUE(identity->passes_kernelbench) << audit.to_text();
  EXPECT_FALSE(identity->passes_ours) << audit.to_text();
  EXPECT_FALSE(audit.weak());
}

// A loss reducing 131072 iid terms: nearly the same scalar for any torch.rand inputs, so
// a constant learned offline passes at 1e-2; at f32's calibrated tolerance it does not.
TEST(ProblemAudit, ConstantLossPassesThePapersToleranceButNotOurs) {
  ProblemAudit audit = audit_problem(op_function("mse_loss:shape=128x1024"), quick_options());
  for (std::string name : {"the reference's mean", "the output for other inputs"}) {
    const TrivialOutputAudit* constant = audit.find(name);
    ASSERT_NE(constant, nullptr) << name << "\n" << audit.to_text();
    EXPECT_TRUE(constant->passes_kernelbench_paper) << name << "\n" << audit.to_text();
    EXPECT_FALSE(constant->passes_ours) << name << "\n" << audit.to_text();
  }
}

// The audit flags a problem whose output does not depend on its input: softmax over a
// row of one element is 1 everywhere.
TEST(ProblemAudit, AConstantProblemIsWeak) {
  ProblemAudit audit = audit_problem(op_function("softmax:shape=8x1"), quick_options());
  EXPECT_TRUE(audit.weak()) << audit.to_text();
  const TrivialOutputAudit* ones = audit.find("ones");
  ASSERT_NE(ones, nullptr);
  EXPECT_TRUE(ones->passes_ours);
  EXPECT_TRUE(ones->passes_kernelbench);
  EXPECT_FALSE(audit.find("zeros")->passes_ours);
}

// verify() runs the same audit on its own input sets: an honest kernel passes a weak
// problem, but the pass is not trusted.
TEST(ProblemAudit, VerifyReportsAWeakProblem) {
  ir::PrimFunc func = op_function("softmax:shape=8x1");
  auto candidate = interpreter_candidate(func);
  Verdict verdict = verify(func, *candidate);
  EXPECT_TRUE(verdict.passed) << verdict.to_text();
  EXPECT_FALSE(verdict.trusted());
  EXPECT_NE(std::find(verdict.weak_because.begin(), verdict.weak_because.end(), "ones"), verdict.weak_because.end())
      << verdict.to_text();
  EXPECT_NE(verdict.to_text().find("WEAK PROBLEM"), std::string::npos);
}

TEST(ProblemAudit, RendersATableAndJson) {
  ProblemAudit audit = audit_problem(op_function("relu:shape=4x8"), quick_options());
  std::string text = audit.to_text();
  EXPECT_NE(text.find("input X passed through"), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(audit.to_json());
  EXPECT_EQ(j["function"], "relu");
  EXPECT_EQ(j["weak"], false);
  ASSERT_EQ(j["trivial_outputs"].size(), audit.trivial_outputs.size());
  EXPECT_EQ(j["trivial_outputs"][0]["name"], "zeros");
  EXPECT_EQ(j["trivial_outputs"][0]["passes_ours"], false);
}

}  // namespace
}  // namespace dragon::harness
