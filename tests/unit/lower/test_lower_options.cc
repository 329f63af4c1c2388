// LowerOptions and the pipeline's bookkeeping: after_pass sees every pass in order with a
// truthful changed flag, timings are filled only on request, and the targets' pass lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "lower_test_util.h"
#include "unit/schedule/gemm_sketch.h"

namespace dragon::lower {
namespace {

using testing::workload;

std::vector<std::string> pass_names(const std::vector<testing::Stage>& stages) {
  std::vector<std::string> names;
  for (size_t i = 1; i < stages.size(); ++i) names.push_back(stages[i].pass);
  return names;
}

const std::vector<std::string> kCpuPasses = {
    "lower_reduction_init", "plan_buffer_allocation", "lower_blocks", "simplify_func", "carry_loop_values",
    "compact_buffers", "serialize_thread_loops", "unroll_loops", "flatten_buffers", "simplify_func", "carry_loop_values",
    "hoist_invariant_guards",
    "verify_index_widths"};

TEST(LowerOptions, AfterPassSeesEveryCpuPassInOrder) {
  Lowered result;
  std::vector<testing::Stage> stages = testing::lower_stages(workload("softmax:shape=4x10"), Target::cpu(), &result);
  EXPECT_EQ(pass_names(stages), kCpuPasses);
  EXPECT_TRUE(stages.back().func.same_as(result.func));  // the last stage is the result
  EXPECT_TRUE(result.timings.empty());                   // not requested
}

TEST(LowerOptions, ChangedIsFalseExactlyWhenThePassReturnedItsInput) {
  // An elementwise op: no init, no intermediate buffer, no unroll annotation.
  std::vector<testing::Stage> stages = testing::lower_stages(workload("relu:shape=4x8"), Target::cpu());
  std::map<std::string, bool> changed;
  for (size_t i = 1; i < stages.size(); ++i) {
    EXPECT_EQ(stages[i].changed, !stages[i].func.same_as(stages[i - 1].func)) << stages[i].pass;
    changed[stages[i].pass] = changed[stages[i].pass] || stages[i].changed;
  }
  EXPECT_FALSE(changed["lower_reduction_init"]);
  EXPECT_FALSE(changed["plan_buffer_allocation"]);
  EXPECT_FALSE(changed["compact_buffers"]);
  EXPECT_FALSE(changed["serialize_thread_loops"]);
  EXPECT_FALSE(changed["unroll_loops"]);
  EXPECT_TRUE(changed["lower_blocks"]);
  EXPECT_TRUE(changed["flatten_buffers"]);
}

TEST(LowerOptions, TimePassesFillsOneTimingPerPass) {
  LowerOptions options;
  options.time_passes = true;
  std::vector<std::string> seen;
  // Each callback takes a millisecond: that time is in the wall clock around lower() and in
  // no pass's timing, which measures the pass alone.
  constexpr std::chrono::milliseconds kCallback{1};
  options.after_pass = [&](const std::string& pass, const ir::PrimFunc&, bool) {
    seen.push_back(pass);
    std::this_thread::sleep_for(kCallback);
  };
  const ir::PrimFunc matmul = workload("matmul:m=8,n=8,k=8");
  const auto start = std::chrono::steady_clock::now();
  Lowered result = lower(matmul, Target::cpu(), options);
  const std::chrono::nanoseconds wall = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(result.timings.size(), kCpuPasses.size());
  std::chrono::nanoseconds total{0};
  for (size_t i = 0; i < result.timings.size(); ++i) {
    EXPECT_EQ(result.timings[i].pass, kCpuPasses[i]);
    EXPECT_GT(result.timings[i].elapsed.count(), 0) << result.timings[i].pass << " did no work in no time";
    total += result.timings[i].elapsed;
  }
  EXPECT_GT(total.count(), 0);
  EXPECT_LE(total, wall - static_cast<int64_t>(kCpuPasses.size()) * kCallback)
      << "the pass timings hold time spent outside the passes";
  EXPECT_TRUE(result.timings[0].changed);  // matmul has an init
  EXPECT_EQ(seen, kCpuPasses);
}

TEST(LowerOptions, CudaRunsTheGpuPassesAroundTheCorePasses) {
  schedule::Schedule sch(workload("relu:shape=8x32"));
  std::vector<schedule::LoopRV> l = sch.get_loops(sch.get_child_blocks(sch.get_block("root"))[0]);
  sch.bind(l[0], "blockIdx.x");
  sch.bind(l[1], "threadIdx.x");
  std::vector<std::string> names = pass_names(testing::lower_stages(sch.func(), Target::cuda_h200()));
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "lower_cross_thread_reduction");
  EXPECT_EQ(names.back(), "verify_index_widths");
  EXPECT_EQ(names[names.size() - 2], "verify_gpu_code");
  auto position = [&](const char* pass) { return std::find(names.begin(), names.end(), pass) - names.begin(); };
  EXPECT_LT(position("lower_blocks"), position("inject_virtual_threads"));
  EXPECT_LT(position("flatten_buffers"), position("unify_thread_bindings"));
  EXPECT_LT(position("plan_gpu_allocations"), position("share_shared_memory"));
  // Merged buffers are one buffer to insert_thread_syncs, which places the barrier between
  // one member's last read and the next member's first write.
  EXPECT_LT(position("share_shared_memory"), position("insert_thread_syncs"));
  EXPECT_EQ(std::count(names.begin(), names.end(), "serialize_thread_loops"), 0);
}

// The MetaSchedule GEMM sketch (tiling, vthread, thread binding, shared and local caches)
// goes through the whole CUDA pipeline into the flat form, and for the CPU computes what
// the scheduled function does.
TEST(LowerOptions, TheGemmSketchLowersForBothTargets) {
  schedule::Schedule sch(workload("matmul:m=64,n=64,k=64"));
  schedule::testing::apply_gemm_sketch(sch);
  Lowered cuda = lower(sch.func(), Target::cuda_h200());
  EXPECT_TRUE(find_flat_form_problems(cuda.func).empty());
  std::string text = ir::print_function(cuda.func);
  EXPECT_NE(text.find("bind blockIdx.x"), std::string::npos) << text;
  EXPECT_NE(text.find("bind threadIdx.x"), std::string::npos) << text;
  EXPECT_NE(text.find("shared {"), std::string::npos) << text;
  EXPECT_TRUE(testing::computes_the_same(sch.func(), lower(sch.func(), Target::cpu()).func));
}

TEST(Target, NamesAndLimits) {
  EXPECT_EQ(Target::cpu().to_string(), "cpu");
  EXPECT_FALSE(Target::cpu().is_gpu());
  Target h200 = Target::cuda_h200();
  EXPECT_EQ(h200.to_string(), "cuda -arch=sm_90a");
  EXPECT_TRUE(h200.is_gpu());
  EXPECT_EQ(h200.max_threads_per_block, 1024);
  EXPECT_EQ(h200.max_shared_memory_per_block, 232448);
  EXPECT_EQ(h200.warp_size, 32);
}

TEST(Target, FromNameKnowsExactlyTheListedNames) {
  EXPECT_EQ(Target::names(), (std::vector<std::string>{"cpu", "cuda"}));
  std::optional<Target> cpu = Target::from_name("cpu");
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->to_string(), Target::cpu().to_string());
  std::optional<Target> cuda = Target::from_name("cuda");
  ASSERT_TRUE(cuda.has_value());
  EXPECT_EQ(cuda->to_string(), Target::cuda_h200().to_string());
  EXPECT_EQ(cuda->max_shared_memory_per_block, Target::cuda_h200().max_shared_memory_per_block);
  for (const char* unknown : {"", "tpu", "CUDA", "cuda ", "interp", "sm_90a"}) {
    EXPECT_FALSE(Target::from_name(unknown).has_value()) << "'" << unknown << "'";
  }
}

}  // namespace
}  // namespace dragon::lower
