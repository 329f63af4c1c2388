// The reward on the CPU: our own kernels and kernel files are verified or rejected with
// the reason as a typed value; screening uses one pool, every recheck a fresh secret draw;
// a build failure is said as such; exploit files are rejected for what they do. And what a
// call costs on the CPU side (printed; the GPU figure comes from test_reward_gpu.cc).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <set>

#include "dragon/harness/reward.h"
#include "dragon/lower/lower.h"
#include "unit/harness/harness_test_util.h"

namespace dragon::harness {
namespace {

using testing::op_function;

constexpr const char* kSoftmax = "softmax:shape=8x64,axis=1";

RewardOptions cpu_options() {
  RewardOptions options;
  options.build.cache = &testing::test_cache();
  options.verify.reference.build.cache = &testing::test_cache();
  options.isolation.runner_path = DRAGON_KERNEL_RUNNER_PATH;
  options.isolation.cache = &testing::test_cache();
  return options;
}

std::string exploit(const std::string& file) { return std::string(DRAGON_SOURCE_DIR) + "/tests/harness_exploits/" + file; }

std::shared_ptr<const runtime::Executable> cpu_build(const ir::PrimFunc& func) {
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  return runtime::build(func, lower::Target::cpu(), options).value();
}

TEST(Reward, OwnKernelIsVerifiedOnThePoolAndRecheckedOnAFreshDrawEachTime) {
  ir::PrimFunc problem = op_function(kSoftmax);
  RewardEvaluator evaluator(problem, cpu_options());
  EXPECT_TRUE(evaluator.weak_because().empty());
  RewardCandidate candidate = RewardCandidate::scheduled(problem);
  Reward first = evaluator.evaluate(candidate);
  ASSERT_TRUE(first.verified()) << first.to_text();
  EXPECT_FALSE(first.latency.has_value()) << "CPU kernels are not timed";
  EXPECT_FALSE(first.fresh_draw);
  EXPECT_TRUE(first.message.empty());
  ASSERT_NE(first.verdict, nullptr);
  EXPECT_GE(first.verdict->input_sets.size(), 9u) << "five distributions and four siblings";
  Reward again = evaluator.evaluate(candidate);
  EXPECT_EQ(again.seed, first.seed) << "screening reuses one pool";
  Reward recheck = evaluator.recheck(candidate);
  Reward recheck_again = evaluator.recheck(candidate);
  ASSERT_TRUE(recheck.verified()) << recheck.to_text();
  EXPECT_TRUE(recheck.fresh_draw);
  EXPECT_NE(recheck.seed, first.seed);
  EXPECT_NE(recheck_again.seed, recheck.seed) << "every recheck draws anew";
  EXPECT_EQ(recheck.to_text().rfind("verified", 0), 0u) << recheck.to_text();
}

// A recheck draws a secret seed even when screening was given one.
TEST(Reward, RecheckIgnoresAGivenScreeningSeed) {
  RewardOptions options = cpu_options();
  options.verify.seed = 42;
  RewardEvaluator evaluator(op_function("relu:shape=4x256"), options);
  RewardCandidate candidate = RewardCandidate::scheduled(evaluator.problem());
  EXPECT_EQ(evaluator.evaluate(candidate).seed, 42u);
  EXPECT_NE(evaluator.recheck(candidate).seed, 42u);
}

// gelu's build has relu's signature: it runs, and computes the wrong thing.
TEST(Reward, WrongKernelIsRejectedWithTheReason) {
  RewardEvaluator evaluator(op_function("relu:shape=4x256"), cpu_options());
  Reward reward = evaluator.evaluate(RewardCandidate::cpu_executable(cpu_build(op_function("gelu:shape=4x256")), "gelu"));
  EXPECT_EQ(reward.status, RewardStatus::kRejected) << reward.to_text();
  ASSERT_FALSE(reward.failures.empty());
  EXPECT_EQ(reward.failures.front(), FailureKind::kWrongValues);
  EXPECT_EQ(reward.message.rfind("wrong values [normal]", 0), 0u) << reward.message;
  EXPECT_FALSE(reward.latency.has_value());
}

TEST(Reward, BuildFailureIsSaidAsSuch) {
  RewardEvaluator evaluator(op_function("relu:shape=4x256"), cpu_options());
  IsolatedKernel broken =
      read_isolated_kernel(std::string(DRAGON_SOURCE_DIR) + "/tests/unit/harness/isolation/kernels/compile_error.cc",
                           "compile_error");
  Reward reward = evaluator.evaluate(RewardCandidate::external(broken));
  EXPECT_EQ(reward.status, RewardStatus::kBuildFailed) << reward.to_text();
  EXPECT_NE(reward.message.find("undeclared_variable"), std::string::npos) << reward.message;
  EXPECT_EQ(reward.verdict, nullptr);
}

// Kernel files run isolated with every check: an honest one is verified, the exploits of
// this issue are rejected for what they do.
TEST(Reward, KernelFilesAreVerifiedOrRejectedForWhatTheyDo) {
  RewardEvaluator softmax(op_function(kSoftmax), cpu_options());
  Reward honest = softmax.evaluate(RewardCandidate::external(read_isolated_kernel(exploit("cpu/honest_softmax.cc"))));
  EXPECT_TRUE(honest.verified()) << honest.to_text();
  Reward cached = softmax.recheck(RewardCandidate::external(read_isolated_kernel(exploit("cpu/sparse_key_cache.cc"))));
  EXPECT_EQ(cached.status, RewardStatus::kRejected) << cached.to_text();
  EXPECT_NE(std::find(cached.failures.begin(), cached.failures.end(), FailureKind::kIgnoresInput),
            cached.failures.end())
      << cached.to_text();

  RewardEvaluator relu(op_function("relu:shape=4x256"), cpu_options());
  Reward writer = relu.evaluate(RewardCandidate::external(read_isolated_kernel(exploit("cpu/write_past_end.cc"))));
  EXPECT_EQ(writer.status, RewardStatus::kRejected);
  EXPECT_EQ(writer.failures.front(), FailureKind::kOutOfBoundsWrite) << writer.to_text();
  Reward reader =
      relu.evaluate(RewardCandidate::external(read_isolated_kernel(exploit("cpu/discarded_read_past_end.cc"))));
  EXPECT_EQ(reader.status, RewardStatus::kRejected);
  EXPECT_EQ(reader.failures.front(), FailureKind::kCrashed) << reader.to_text();
}

TEST(Reward, OwnKernelsMayRunIsolatedToo) {
  RewardOptions options = cpu_options();
  options.isolate_own_cpu_kernels = true;
  RewardEvaluator evaluator(op_function(kSoftmax), options);
  Reward reward = evaluator.evaluate(RewardCandidate::scheduled(evaluator.problem()));
  EXPECT_TRUE(reward.verified()) << reward.to_text();
}

// Wall time and CPU time (this process and its children: runners, compilers) of a loop.
struct Cost {
  double wall_ms = 0, cpu_ms = 0;
};

double cpu_ms_now() {
  rusage self{}, children{};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(self.ru_utime) + ms(self.ru_stime) + ms(children.ru_utime) + ms(children.ru_stime);
}

template <typename F>
Cost cost_per_call(int calls, F call) {
  const double cpu_start = cpu_ms_now();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) call();
  Cost cost;
  cost.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / calls;
  cost.cpu_ms = (cpu_ms_now() - cpu_start) / calls;
  return cost;
}

// The CPU-side cost of one call, for a search's budget: our own prebuilt CPU kernel judged
// in this process on the screening pool, and a kernel file (every run a runner child), with
// namespaces and without. Printed for the report (CPU time is the figure on a shared
// machine: wall time there includes the wait for a core); bounded loosely so that a
// tenfold regression fails.
TEST(Reward, CpuSideCostPerCandidate) {
  for (const char* spec : {kSoftmax, "layer_norm:shape=32x256", "matmul:m=64,n=64,k=64"}) {
    ir::PrimFunc problem = op_function(spec);
    RewardEvaluator evaluator(problem, cpu_options());
    RewardCandidate own = RewardCandidate::cpu_executable(cpu_build(problem), "own");
    evaluator.evaluate(own);  // warm
    Cost cost = cost_per_call(100, [&] { ASSERT_TRUE(evaluator.evaluate(own).verified()); });
    std::printf("reward cost on %s: own prebuilt CPU kernel, %.3f ms CPU (%.3f ms wall) per candidate: %.0f per "
                "minute per core\n",
                spec, cost.cpu_ms, cost.wall_ms, 60000.0 / cost.cpu_ms);
    EXPECT_LT(cost.cpu_ms, 100.0);
  }
  for (RunnerNamespaces namespaces : {RunnerNamespaces::kWhereAvailable, RunnerNamespaces::kOff}) {
    RewardOptions options = cpu_options();
    options.isolation.namespaces = namespaces;
    RewardEvaluator softmax(op_function(kSoftmax), options);
    RewardCandidate file = RewardCandidate::external(read_isolated_kernel(exploit("cpu/honest_softmax.cc")));
    softmax.evaluate(file);  // compiles once, into the cache
    Cost cost = cost_per_call(5, [&] { ASSERT_TRUE(softmax.evaluate(file).verified()); });
    std::printf("reward cost on %s: CPU kernel file, isolated (%s): %.1f ms CPU (%.1f ms wall) per candidate, "
                "compile cached\n",
                kSoftmax, describe_runner_isolation(options.isolation, KernelLanguage::kCpu).c_str(), cost.cpu_ms,
                cost.wall_ms);
    EXPECT_LT(cost.cpu_ms, 5000.0);
  }
}

}  // namespace
}  // namespace dragon::harness
