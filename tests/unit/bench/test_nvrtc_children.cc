// The tuner's persistent NVRTC children (nvrtc_children.h), without a GPU: one pool serves
// round after round with the children it forked; a function NVRTC rejects, or code
// generation refuses, fails alone with its own failure while its program's other members
// build; a child past its time is
// killed, its program fails saying so, and the pool replaces it. Skips without NVRTC.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "dragon/bench/candidate_builds.h"
#include "dragon/bench/nvrtc_children.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "unit/runtime/unbuildable_functions.h"

namespace dragon::bench {
namespace {

ir::PrimFunc lowered(const std::string& spec) {
  schedule::Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
  search::auto_bind(sch);
  return lower::lower(sch.func(), lower::Target::cuda_h200()).func;
}

// Every function's build, by index, from one build() call.
std::vector<std::optional<Expected<runtime::CudaBuild>>> build_all(NvrtcChildren& children,
                                                                   const std::vector<ir::PrimFunc>& flats,
                                                                   const std::vector<ProgramRange>& ranges) {
  std::vector<std::optional<Expected<runtime::CudaBuild>>> builds(flats.size());
  children.build(flats, ranges, [&](size_t index, Expected<runtime::CudaBuild> build) {
    EXPECT_FALSE(builds.at(index).has_value()) << "function " << index << " built twice";
    builds.at(index).emplace(std::move(build));
  });
  return builds;
}

TEST(NvrtcChildren, OnePoolServesRoundAfterRoundAndARejectedFunctionFailsAlone) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] no NVRTC in this build";
  NvrtcChildren children(2, lower::Target::cuda_h200(), std::chrono::minutes(10));
  ASSERT_EQ(children.size(), 2u);
  // Round 1: the rejected function shares a program with two good ones.
  std::vector<ir::PrimFunc> first = {lowered("relu:shape=64x64"), testing::writes_its_input(),
                                     lowered("sigmoid:shape=32x32"), lowered("softmax:shape=16x128"),
                                     testing::outside_any_kernel()};
  auto builds = build_all(children, first, {{0, 3}, {3, 5}});
  for (size_t i : {0u, 2u, 3u}) {
    ASSERT_TRUE(builds[i].has_value()) << i;
    ASSERT_TRUE(builds[i]->ok()) << i << ": " << builds[i]->error().describe();
    EXPECT_FALSE(builds[i]->value().cubin.bytes.empty());
  }
  ASSERT_TRUE(builds[1].has_value());
  ASSERT_FALSE(builds[1]->ok());
  EXPECT_EQ(builds[1]->error().api, "nvrtcCompileProgram") << "NVRTC's own failure, as the child saw it";
  EXPECT_NE(builds[1]->error().log.find("in[tx] = out[tx];"), std::string::npos) << builds[1]->error().log;
  // Code generation refused the last: it fails alone, its program-mate builds.
  ASSERT_TRUE(builds[4].has_value());
  ASSERT_FALSE(builds[4]->ok());
  EXPECT_EQ(builds[4]->error().api, "generate_cuda");
  EXPECT_NE(builds[4]->error().message.find("outside any kernel"), std::string::npos) << builds[4]->error().message;
  // Compiled again alone, under its batch name, the good members have modules of their own.
  EXPECT_NE(builds[0]->value().cubin.bytes, builds[2]->value().cubin.bytes);
  EXPECT_EQ(builds[0]->value().source.kernels.front().name.rfind("b0_", 0), 0u);
  // Round 2, the same children: more programs than children.
  std::vector<ir::PrimFunc> second;
  for (const char* spec : {"relu:shape=8x8", "sigmoid:shape=8x16", "tanh:shape=16x16", "relu:shape=32x8", "gelu:shape=8x8"}) {
    second.push_back(lowered(spec));
  }
  builds = build_all(children, second, plan_programs(second.size(), {.functions_per_program = 1}, children.size()));
  for (size_t i = 0; i < second.size(); ++i) {
    ASSERT_TRUE(builds[i].has_value() && builds[i]->ok()) << i;
    EXPECT_EQ(builds[i]->value().source.kernels.front().name.rfind("b", 0), std::string::npos)
        << "a program of one keeps the function's own names";
  }
  EXPECT_EQ(children.restarts(), 0) << "no child ended, none was started again";
}

TEST(NvrtcChildren, AChildPastItsTimeIsKilledAndReplaced) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] no NVRTC in this build";
  // A shape no earlier run compiled, so no compile cache answers within the millisecond.
  std::mt19937_64 random(std::random_device{}());
  const int64_t rows = 1000 + static_cast<int64_t>(random() % 100000);
  std::vector<ir::PrimFunc> flats = {lowered("softmax:shape=" + std::to_string(rows) + "x96"),
                                     lowered("softmax:shape=" + std::to_string(rows) + "x97")};
  NvrtcChildren children(1, lower::Target::cuda_h200(), std::chrono::milliseconds(1));
  auto builds = build_all(children, flats, {{0, 1}, {1, 2}});
  for (size_t i = 0; i < flats.size(); ++i) {
    ASSERT_TRUE(builds[i].has_value()) << i;
    ASSERT_FALSE(builds[i]->ok()) << i;
    EXPECT_EQ(builds[i]->error().api, "NVRTC child");
    EXPECT_NE(builds[i]->error().message.find("no reply within 1 ms"), std::string::npos) << builds[i]->error().message;
  }
  EXPECT_GE(children.restarts(), 1) << "the second program needed a new child";
  EXPECT_EQ(children.work().programs, 0u) << "a killed child answers nothing, and its work is not counted";
}

// Each child measures the CPU time of the programs it compiles and sends it back with the
// CUBIN: the pool adds up its children's work (NVRTC's share of a round, apart from the
// wall time of waiting for it).
TEST(NvrtcChildren, ThePoolAddsUpTheWorkItsChildrenReport) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] no NVRTC in this build";
  // Shapes no earlier run compiled: real compiles, not cache hits.
  std::mt19937_64 random(std::random_device{}());
  const int64_t rows = 1000 + static_cast<int64_t>(random() % 100000);
  std::vector<ir::PrimFunc> flats = {lowered("softmax:shape=" + std::to_string(rows) + "x64"),
                                     lowered("relu:shape=" + std::to_string(rows) + "x8"),
                                     lowered("sigmoid:shape=" + std::to_string(rows) + "x8")};
  NvrtcChildren children(2, lower::Target::cuda_h200(), std::chrono::minutes(10));
  auto builds = build_all(children, flats, {{0, 1}, {1, 3}});
  for (size_t i = 0; i < flats.size(); ++i) ASSERT_TRUE(builds[i].has_value() && builds[i]->ok()) << i;
  const NvrtcChildren::Work first = children.work();
  EXPECT_EQ(first.programs, 2u);
  // A real compile of a softmax takes NVRTC tens of milliseconds of CPU.
  EXPECT_GT(first.cpu_seconds, 0.005);
  builds = build_all(children, {flats[1]}, {{0, 1}});
  ASSERT_TRUE(builds[0].has_value() && builds[0]->ok());
  EXPECT_EQ(children.work().programs, 3u);
  EXPECT_GT(children.work().cpu_seconds, first.cpu_seconds);
}

}  // namespace
}  // namespace dragon::bench
