// GPU tuning's builds without a GPU: candidates compiled by NVRTC in forked children, several
// per program, come back in order with their launches and CUBINs; a function NVRTC rejects
// fails alone; the wire form round-trips. Skips without NVRTC in this build.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dragon/bench/candidate_builds.h"
#include "dragon/bench/nvrtc_children.h"
#include "dragon/bench/gpu_tuning.h"
#include "dragon/script/script.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"

namespace dragon::bench {
namespace {

ir::PrimFunc lowered(const std::string& spec, int64_t threads) {
  schedule::Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
  search::AutoBindOptions options;
  options.max_threads_per_block = threads;
  search::auto_bind(sch, options);
  return lower::lower(sch.func(), lower::Target::cuda_h200()).func;
}

TEST(CandidateBuilds, CompilesInForkedChildrenAndKeepsTheOrder) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] no NVRTC in this build";
  std::vector<ir::PrimFunc> flats = {lowered("relu:shape=64x64", 64), lowered("relu:shape=64x64", 128),
                                     lowered("softmax:shape=128x256", 64), lowered("sigmoid:shape=32x32", 32),
                                     lowered("relu:shape=64x64", 256)};
  std::vector<Expected<runtime::CudaBuild>> builds =
      build_candidates(flats, {.functions_per_program = 2, .processes = 2});
  ASSERT_EQ(builds.size(), flats.size());
  const int64_t threads[] = {64, 128, 64, 32, 256};
  for (size_t i = 0; i < builds.size(); ++i) {
    ASSERT_TRUE(builds[i].ok()) << builds[i].error().describe();
    const runtime::CudaBuild& b = builds[i].value();
    EXPECT_FALSE(b.cubin.bytes.empty());
    ASSERT_FALSE(b.source.kernels.empty());
    EXPECT_EQ(b.source.kernels[0].block[0], threads[i]) << i;
  }
  // The wire form keeps what the worker needs.
  search::ByteWriter out;
  encode_build(out, builds[2].value());
  std::string bytes = out.take();
  search::ByteReader in(bytes);
  runtime::CudaBuild back = decode_build(in);
  ASSERT_EQ(back.source.kernels.size(), builds[2].value().source.kernels.size());
  for (size_t k = 0; k < back.source.kernels.size(); ++k) {
    const codegen::KernelLaunch &a = back.source.kernels[k], &b = builds[2].value().source.kernels[k];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.grid, b.grid);
    EXPECT_EQ(a.block, b.block);
    EXPECT_EQ(a.dynamic_shared_bytes, b.dynamic_shared_bytes);
    EXPECT_EQ(a.args, b.args);
  }
  EXPECT_EQ(back.cubin.bytes, builds[2].value().cubin.bytes);
}

TEST(CandidateBuilds, ABatchIsSpreadOverEveryChildBeforeProgramsGrow) {
  auto sizes = [](size_t count, size_t max_per_program, size_t processes) {
    std::vector<size_t> out;
    size_t next = 0;
    for (const ProgramRange& r : plan_programs(count, max_per_program, processes)) {
      EXPECT_EQ(r.begin, next) << "consecutive ranges";
      next = r.end;
      out.push_back(r.end - r.begin);
    }
    EXPECT_EQ(next, count) << "every function in one program";
    return out;
  };
  // The H200 machine: 15 children. 32 candidates were 2 programs of 16; now 15 of 2 or 3.
  EXPECT_EQ(sizes(32, 16, 15), (std::vector<size_t>{3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(sizes(5, 16, 15), (std::vector<size_t>{1, 1, 1, 1, 1}));
  // More functions than children at the maximum: programs of at most the maximum, in full
  // waves of one program per child (256 candidates of 16 tasks: not 16 programs of 16,
  // whose 16th would compile alone after the other 15, but 30 of 8 or 9).
  EXPECT_EQ(sizes(40, 4, 3), (std::vector<size_t>{4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(sizes(41, 4, 3), (std::vector<size_t>{4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3}));
  std::vector<size_t> h200 = sizes(256, 16, 15);
  EXPECT_EQ(h200.size(), 30u);
  EXPECT_EQ(*std::max_element(h200.begin(), h200.end()), 9u);
  EXPECT_TRUE(plan_programs(0, 16, 15).empty());
  EXPECT_EQ(sizes(7, 0, 0), (std::vector<size_t>(7, 1))) << "zeros mean one";
}

// Builds reach the caller while other programs still compile: at the first build, at
// most the first reply's programs are back (4 programs, 2 children), and every build
// comes once, the same as build_candidates gives.
TEST(CandidateBuilds, StreamingHandsBuildsOverWhileTheRestCompile) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] no NVRTC in this build";
  std::vector<ir::PrimFunc> flats;
  for (int64_t threads : {32, 64, 128, 256}) {
    flats.push_back(lowered("relu:shape=64x64", threads));
    flats.push_back(lowered("sigmoid:shape=32x32", threads));
  }
  CandidateBuildOptions options{.functions_per_program = 16, .processes = 2, .min_waves = 2};
  const std::vector<ProgramRange> ranges = plan_programs(flats.size(), options, 2);
  ASSERT_EQ(ranges.size(), 4u) << "8 functions, 2 children, 2 programs each";
  NvrtcChildren children(2, lower::Target::cuda_h200(), std::chrono::minutes(10));
  std::vector<size_t> order;
  std::vector<size_t> unfinished;
  std::vector<std::string> cubins(flats.size());
  children.build(flats, ranges, [&](size_t index, Expected<runtime::CudaBuild> build) {
    ASSERT_TRUE(build.ok()) << build.error().describe();
    order.push_back(index);
    unfinished.push_back(children.programs_unfinished());
    cubins[index] = build.value().cubin.bytes;
  });
  ASSERT_EQ(order.size(), flats.size());
  EXPECT_GE(unfinished.front(), 2u) << "the first build waited for every program";
  EXPECT_EQ(unfinished.back(), 0u);
  std::vector<size_t> all = order;
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7})) << "each build once";
  std::vector<Expected<runtime::CudaBuild>> at_once = build_candidates(flats, options);
  for (size_t i = 0; i < flats.size(); ++i) EXPECT_EQ(at_once[i].value().cubin.bytes, cubins[i]) << i;
  EXPECT_EQ(children.restarts(), 0);
}

// The five candidates that crashed the H200 (data/regressions/h200_illegal_address.jsonl)
// keep one copy of an embedding bag's pooled rows per thread: 16 GiB of scratch for a
// problem of about 1 GiB. The GPU measurers reject them before compiling; the untuned
// default of the same problem passes.
TEST(CandidateBuilds, ACandidateWithScratchFarBeyondItsProblemIsRejected) {
  std::ifstream in(std::string(DRAGON_SOURCE_DIR) + "/data/regressions/h200_illegal_address.jsonl");
  ASSERT_TRUE(in) << "the regression records are missing";
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  nlohmann::json record = nlohmann::json::parse(line);
  const ops::Workload w = ops::OpRegistry::global().make_workload(record.at("spec").get<std::string>());
  ir::PrimFunc scheduled = schedule::replay(script::decode(record.at("script").get<std::string>()), w.func).func();
  runtime::Generated generated = runtime::generate(scheduled, lower::Target::cuda_h200());
  std::optional<std::string> why = excessive_workspaces(generated, scheduled);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("GiB"), std::string::npos) << *why;

  schedule::Schedule plain(w.func);
  search::auto_bind(plain);
  EXPECT_FALSE(excessive_workspaces(runtime::generate(plain.func(), lower::Target::cuda_h200()), plain.func()).has_value());
}

}  // namespace
}  // namespace dragon::bench
