// Each design-space rule on workloads where it applies (the lines of the sketch's compact
// script that matter) and where it must not (the rule leaves no trace); and the sampling
// sites' roles that mutators read.
#include <gtest/gtest.h>

#include <algorithm>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/lower/gpu/barrier_simulator.h"
#include "unit/lower/gpu/gpu_test_util.h"
#include "unit/lower/lower_test_util.h"
#include "unit/schedule/schedule_test_util.h"
#include "unit/search/search_test_sketches.h"
#include "unit/search/reduction_uses.h"

namespace dragon::search {
namespace {

using schedule::testing::has_line;
using schedule::testing::workload;
using testing::kH200;
using testing::longest_serial_sum;


// A rule set of the given rules (with their defaults) and no postprocessors.
RuleSet only(const std::vector<std::string>& rules, lower::Target::Kind target = lower::Target::Kind::kCuda) {
  RuleSet set;
  set.name = "test";
  set.target = target;
  for (const std::string& r : rules) set.rules.push_back(RuleSpec{r, {}, {}});
  return set;
}

std::vector<Sketch> space(const std::string& spec, const RuleSet& rules, const lower::Target& target = kH200) {
  return generate_design_space(workload(spec), target, rules);
}

std::string script_of(const Sketch& sketch) { return script::encode(sketch.trace); }

bool applied(const Sketch& sketch, const std::string& what) {
  return std::find(sketch.applied.begin(), sketch.applied.end(), what) != sketch.applied.end();
}

int count_lines(const std::string& text, const std::string& prefix) {
  int n = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, prefix.size(), prefix) == 0) ++n;
    at = end + 1;
  }
  return n;
}

TEST(MultiLevelTiling, TilesAGemmSSSRRSRSWithSharedReadsAndALocalWrite) {
  std::vector<Sketch> s = space("matmul:m=128,n=128,k=128", only({"multi_level_tiling"}));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(applied(s[0], "multi_level_tiling(C)"));
  std::string text = script_of(s[0]);
  EXPECT_TRUE(has_line(text, "ann b0 tiling SSSRRSRS")) << text;
  EXPECT_EQ(count_lines(text, "spt l0 5 64"), 1) << text;  // i: five levels
  EXPECT_EQ(count_lines(text, "spt l1 5 64"), 1) << text;  // j
  EXPECT_EQ(count_lines(text, "spt l2 3 64"), 1) << text;  // k: three
  EXPECT_TRUE(has_line(text, "cw b0 0 local")) << text;
  EXPECT_TRUE(has_line(text, "cr b0 0 shared b0")) << text;
  EXPECT_TRUE(has_line(text, "cr b0 1 shared b0")) << text;
  EXPECT_EQ(count_lines(text, "ann b") - count_lines(text, "ann b0"), 2) << text;  // cooperative fetches
  EXPECT_EQ(count_lines(text, "bind"), 3) << text;
  EXPECT_NE(text.find(" bx\n"), std::string::npos);
  EXPECT_NE(text.find(" vx\n"), std::string::npos);
  EXPECT_NE(text.find(" tx\n"), std::string::npos);
  EXPECT_TRUE(has_line(text, "ann b0 thigh 1024")) << text;
}

TEST(MultiLevelTiling, LeavesBlocksWithoutReuseAlone) {
  for (const char* spec : {"relu:shape=64x64", "sum:shape=64x64,axis=1", "softmax:shape=64x64,axis=1"}) {
    std::vector<Sketch> s = space(spec, only({"multi_level_tiling"}));
    ASSERT_EQ(s.size(), 1u) << spec;
    EXPECT_TRUE(s[0].applied.empty()) << spec;
  }
}

// Group norm's rfactor block reads X (indexed by every spatial variable: each element
// once) and the group's mean (shared by the block's spatial points). Only the mean is
// staged; a tile of X cost up to 3.6 MB of shared memory and 54 of 80 candidates.
TEST(MultiLevelTiling, StagesOnlyReadsWithReuse) {
  const std::string spec = "group_norm:shape=1x512x64x64,num_groups=32,dtype=f16";
  std::vector<Sketch> tiled = space(spec, only({"add_rfactor", "multi_level_tiling"}));
  int checked = 0;
  for (const Sketch& sketch : tiled) {
    if (!applied(sketch, "multi_level_tiling(sq_dev_sum_rf)")) continue;
    ++checked;
    const std::string text = script_of(sketch);
    EXPECT_EQ(count_lines(text, "cr "), 1) << text;
    EXPECT_NE(text.find(" 1 shared "), std::string::npos) << "the mean (read 1) is staged\n" << text;
  }
  EXPECT_GT(checked, 0);
  // With the whole rule set, every sampled candidate fits the H200's shared memory.
  const ir::PrimFunc func = workload(spec);
  const std::vector<Sketch> sketches = generate_design_space(func, kH200, RuleSet::cuda());
  for (int64_t seed = 1; seed <= 40; ++seed) {
    const CandidateResult r =
        sample_candidate(sketches[static_cast<size_t>(seed) % sketches.size()], func, kH200, RuleSet::cuda(), seed);
    EXPECT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
  }
}

TEST(MultiLevelTiling, OnTheCpuForksOverTheWriteCache) {
  std::vector<Sketch> s = space("matmul:m=64,n=64,k=64", only({"multi_level_tiling"}, lower::Target::Kind::kCpu),
                                lower::Target::cpu());
  ASSERT_EQ(s.size(), 3u);  // no cache, a global cache at level 1, at level 2
  int cached = 0;
  for (const Sketch& sketch : s) {
    std::string text = script_of(sketch);
    EXPECT_TRUE(has_line(text, "ann b0 tiling SSRSRS")) << text;
    EXPECT_EQ(count_lines(text, "bind"), 0) << text;
    cached += has_line(text, "cw b0 0 global") ? 1 : 0;
  }
  EXPECT_EQ(cached, 2);
}

TEST(MultiLevelTilingTensorCore, OffersTensorCoresForHalfGemmsBesidePlainTiling) {
  RuleSet rules = only({"multi_level_tiling_tensor_core", "multi_level_tiling"});
  for (const char* spec : {"matmul:m=128,n=128,k=128,dtype=f16", "matmul:m=128,n=128,k=128,dtype=bf16,trans_b=true",
                           "batch_matmul:batch=2,m=64,n=64,k=64,dtype=f16"}) {
    std::vector<Sketch> s = space(spec, rules);
    ASSERT_EQ(s.size(), 2u) << spec;
    std::string tc = script_of(s[0]);
    EXPECT_TRUE(has_line(tc, "cw b0 0 warp")) << tc;
    EXPECT_NE(tc.find("cr b0 0 shdyn b0"), std::string::npos) << tc;
    EXPECT_NE(tc.find("autotc mma_m16n8k16_"), std::string::npos) << tc;
    EXPECT_TRUE(applied(s[1], "multi_level_tiling(C_acc)")) << spec;
  }
}

TEST(MultiLevelTilingTensorCore, LeavesOtherBlocksToPlainTiling) {
  RuleSet rules = only({"multi_level_tiling_tensor_core"});
  // GEMMs whose padding to whole tiles would more than double the work (kMaxPaddedWork:
  // k = 3 to 8 for tf32, m = 4 to 16, a 1x1 conv of one channel's k = 1 to 16; shapes
  // padded within it and convolutions: test_implicit_gemm_space.cc; f32 GEMMs take the tf32
  // mma: test_tf32_space.cc).
  for (const char* spec : {"matmul:m=128,n=128,k=3", "matmul:m=4,n=128,k=128,dtype=f16",
                           "conv2d:batch=2,in_channels=1,out_channels=16,size=8x8,kernel=1x1,dtype=f16"}) {
    std::vector<Sketch> s = space(spec, rules);
    ASSERT_EQ(s.size(), 1u) << spec;
    EXPECT_TRUE(s[0].applied.empty()) << spec;
  }
}

TEST(AddRFactor, SplitsALongKIntoChunksAndDropsTheSerialGemm) {
  // K = 65536 in f32: tiling would keep all of it in each thread. One sketch per chunk, the
  // untouched one dropped.
  std::vector<Sketch> gemm = space("matmul:m=8,n=8,k=65536", only({"add_rfactor"}));
  ASSERT_EQ(gemm.size(), 2u);
  for (const Sketch& s : gemm) EXPECT_TRUE(applied(s, "add_rfactor(C)")) << script_of(s);
  std::string text = script_of(gemm[0]);
  EXPECT_TRUE(has_line(text, "sp l2 None 1024")) << text;  // [64 chunks, 1024]
  EXPECT_EQ(count_lines(text, "rf "), 1) << text;
  // A row sum of 32768 terms: cross-thread reduction alone leaves 32 a thread, so the
  // untouched schedule stays beside the two split ones; 2^23 terms would leave 8192.
  EXPECT_EQ(space("sum:shape=2x32768,axis=1", only({"add_rfactor"})).size(), 3u);
  EXPECT_EQ(space("sum:shape=1x8388608,axis=1", only({"add_rfactor"})).size(), 2u);
  // An f16 GEMM accumulates in f32 and is compared at f16's tolerance, 200 times looser
  // than f32's: its serial sum may be far longer, so the untouched schedule stays beside
  // the split ones, and with it, in the whole CUDA set, the tensor-core sketches.
  EXPECT_EQ(space("matmul:m=8,n=8,k=65536,dtype=f16", only({"add_rfactor"})).size(), 3u);
  std::vector<Sketch> half = space("matmul:m=64,n=64,k=28672,trans_b=true,dtype=f16", RuleSet::cuda());
  EXPECT_TRUE(std::any_of(half.begin(), half.end(), [](const Sketch& s) {
    return applied(s, "multi_level_tiling_tensor_core(C_acc)") || applied(s, "multi_level_tiling_wgmma(C_acc)");
  })) << half.size() << " sketches, none on tensor cores";
  // Short reductions, and argmax (no reducer rfactor knows), are left alone.
  EXPECT_TRUE(space("matmul:m=64,n=64,k=8192", only({"add_rfactor"}))[0].applied.empty());
  EXPECT_TRUE(space("argmax:shape=2x65536,axis=1", only({"add_rfactor"}))[0].applied.empty());
}

// The CUDA set with its thresholds scaled down 16-fold, so sums the interpreter runs in
// moments are "very long": add_rfactor from 1024 terms in chunks of 128 or 256, at most
// 256 terms serially in a thread for it and for cross-thread reduction.
RuleSet cuda_with_short_serial_sums() {
  RuleSet set = RuleSet::cuda();
  for (RuleSpec& r : set.rules) {
    if (r.rule == "add_rfactor") {
      r.params["chunk_extents"] = std::vector<int64_t>{128, 256};
      r.params["min_reduce_extent"] = int64_t{1024};
      r.params["max_serial_terms"] = int64_t{256};
    } else if (r.rule == "cross_thread_reduction") {
      r.params["serial_reduction_limit"] = int64_t{256};
    }
  }
  return set;
}

TEST(AddRFactor, NoCandidateOfALongSumSumsMoreThanAChunkInOneThread) {
  // A long-K GEMM, a dot product, a norm over every element and an MSE loss: every
  // sampled candidate of every sketch computes the op (on the interpreter) and no thread
  // sums more than 256 terms serially; the GEMM (tiled, its K whole in each thread
  // otherwise) only ever splits.
  const RuleSet rules = cuda_with_short_serial_sums();
  for (const char* spec : {"matmul:m=4,n=8,k=2048", "matmul:m=1,n=1,k=8192", "frobenius_norm:shape=4x8x8x16",
                           "mse_loss:shape=64x64"}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> sketches = generate_design_space(func, kH200, rules);
    ASSERT_FALSE(sketches.empty());
    int checked = 0, split = 0;
    for (const Sketch& sketch : sketches) {
      bool splits = std::any_of(sketch.applied.begin(), sketch.applied.end(),
                                [](const std::string& a) { return a.rfind("add_rfactor", 0) == 0; });
      split += splits ? 1 : 0;
      if (std::string(spec).starts_with("matmul:m=4")) EXPECT_TRUE(splits) << script_of(sketch);
      for (int64_t seed = 0; seed < 2; ++seed) {
        CandidateResult r = sample_candidate(sketch, func, kH200, rules, seed);
        if (!r.ok()) continue;
        ++checked;
        EXPECT_LE(longest_serial_sum(r.candidate().func), 256) << r.candidate().trace.to_string();
        EXPECT_TRUE(schedule::testing::same_outputs(func, r.candidate().func, 5, /*exact=*/false))
            << r.candidate().trace.to_string();
      }
    }
    EXPECT_GT(split, 0);
    EXPECT_GT(checked, 0);
  }
}

// A split-K GEMM's partial sums C_rf[chunk, i, j] read A and B at the chunk as well: a batch
// of GEMMs (present_as_gemm's batch group), so the tensor-core rules tile them (mma.sync in
// f32 as 3xTF32 and in f16; wgmma in f16 on tiles of 64 x 128) instead of leaving a long-K
// GEMM to CUDA-core FMAs. Every candidate tensorizes its partial sums and computes the GEMM
// on the interpreter.
TEST(AddRFactor, ASplitKGemmsPartialSumsRunOnTensorCores) {
  const RuleSet rules = cuda_with_short_serial_sums();
  struct Case {
    const char* spec;
    const char* rule;
    const char* tensorized;  // a line of every candidate's script
  };
  for (const Case& c : {Case{"matmul:m=32,n=16,k=2048", "multi_level_tiling_tensor_core(", "mma_store_m16n8_f32"},
                        Case{"matmul:m=32,n=16,k=2048,trans_b=true,dtype=f16", "multi_level_tiling_tensor_core(",
                             "mma_store_m16n8_f32"},
                        Case{"matmul:m=64,n=128,k=2048,dtype=f16", "multi_level_tiling_wgmma(", "wgmma_"}}) {
    SCOPED_TRACE(c.spec);
    ir::PrimFunc func = workload(c.spec);
    int checked = 0;
    for (const Sketch& sketch : generate_design_space(func, kH200, rules)) {
      const bool partial_sums_tiled = std::any_of(sketch.applied.begin(), sketch.applied.end(), [&](const std::string& a) {
        return a.starts_with(c.rule) && a.ends_with("_rf)");
      });
      if (!partial_sums_tiled) continue;
      CandidateResult r = sample_candidate(sketch, func, kH200, rules, checked);
      ASSERT_TRUE(r.ok()) << r.failure().message << "\n" << script_of(sketch);
      ++checked;
      const std::string text = script::encode(r.candidate().trace);
      EXPECT_NE(text.find(c.tensorized), std::string::npos) << text;
      EXPECT_LE(longest_serial_sum(r.candidate().func), 256) << text;
      // Compared at the output type's tolerance (an f16 C rounds the f32 sums).
      std::vector<tensor::HostTensor> expected = interp::make_arguments(func, 5, interp::Distribution::kNormal);
      std::vector<tensor::HostTensor> actual = expected;
      interp::run(func, expected);
      interp::run(r.candidate().func, actual);
      EXPECT_TRUE(codegen::testing::outputs_match(func, expected, actual)) << text;
    }
    EXPECT_GT(checked, 0) << "no tensor-core sketch of the partial sums";
  }
}

TEST(CrossThreadReduction, ReducesRowsAcrossThreadsInTheConsumersKernel) {
  // A row softmax: the two reductions join the output's kernel, in shared memory, each
  // row's terms on threadIdx.x; the untouched schedule stays in the space (short rows).
  std::vector<Sketch> s = space("softmax:shape=64x256,axis=1", only({"auto_inline", "cross_thread_reduction"}));
  ASSERT_GE(s.size(), 2u);
  const Sketch& across = s[0];
  EXPECT_TRUE(applied(across, "cross_thread_reduction(exp_sum)")) << script_of(across);
  EXPECT_TRUE(applied(across, "cross_thread_reduction(x_max)")) << script_of(across);
  std::string text = script_of(across);
  EXPECT_EQ(count_lines(text, "ss b"), 2) << text;  // both outputs in shared memory
  EXPECT_EQ(count_lines(text, "ca b"), 2) << text;  // computed at the consumer's row loop
  EXPECT_GE(count_lines(text, "bind"), 3) << text;
  bool untouched = std::any_of(s.begin(), s.end(), [](const Sketch& k) {
    return std::none_of(k.applied.begin(), k.applied.end(),
                        [](const std::string& a) { return a.rfind("cross_thread_reduction", 0) == 0; });
  });
  EXPECT_TRUE(untouched);
}

TEST(CrossThreadReduction, DropsTheSerialScheduleForLongSums) {
  std::vector<Sketch> s = space("sum:shape=4x65536,axis=1", only({"cross_thread_reduction"}));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(applied(s[0], "cross_thread_reduction(sum)")) << script_of(s[0]);
}

TEST(CrossThreadReduction, LeavesGemmsWithManyOutputsToTiling) {
  EXPECT_TRUE(space("matmul:m=64,n=64,k=64", only({"cross_thread_reduction"}))[0].applied.empty());
  // A matrix-vector product has few outputs and many terms.
  std::vector<Sketch> gemv = space("matmul:m=4,n=1,k=8192", only({"cross_thread_reduction"}));
  EXPECT_TRUE(applied(gemv[0], "cross_thread_reduction(C)")) << script_of(gemv[0]);
}

TEST(AutoInline, InlinesElementwiseProducersAndOutputCasts) {
  std::vector<Sketch> s = space("softmax:shape=8x64,axis=1", only({"auto_inline"}));
  EXPECT_TRUE(applied(s[0], "auto_inline(x_exp)")) << script_of(s[0]);
  EXPECT_TRUE(has_line(script_of(s[0]), "ci b0") || script_of(s[0]).find("ci b") != std::string::npos);
  // An f16 GEMM's output cast goes into the block that writes back the local accumulator.
  std::vector<Sketch> gemm = space("matmul:m=64,n=64,k=64,dtype=f16", only({"multi_level_tiling", "auto_inline"}));
  EXPECT_TRUE(applied(gemm[0], "auto_inline(C)")) << script_of(gemm[0]);
  EXPECT_NE(script_of(gemm[0]).find("rci b"), std::string::npos);
  // Nothing to inline in a single-block op.
  EXPECT_TRUE(space("relu:shape=64", only({"auto_inline"}))[0].applied.empty());
}

TEST(AutoInline, KeepsAMathBlockWithSeveralConsumersWhenAskedTo) {
  // softmax's x_exp calls exp and is read by exp_sum and the output: with
  // inline_math_into_many = false (the CPU set) it stays a stage, so exp runs once per
  // element; layer_norm's inv_std (rsqrt, one consumer) is still inlined.
  RuleSet keep = only({"auto_inline"}, lower::Target::Kind::kCpu);
  keep.rules[0].params["inline_math_into_many"] = false;
  const lower::Target cpu = lower::Target::cpu();
  std::vector<Sketch> softmax = space("softmax:shape=8x64,axis=1", keep, cpu);
  EXPECT_FALSE(applied(softmax[0], "auto_inline(x_exp)")) << script_of(softmax[0]);
  std::vector<Sketch> norm = space("layer_norm:shape=4x2x8", keep, cpu);
  EXPECT_TRUE(applied(norm[0], "auto_inline(inv_std)")) << script_of(norm[0]);
  EXPECT_TRUE(applied(space("softmax:shape=8x64,axis=1", only({"auto_inline"}, lower::Target::Kind::kCpu), cpu)[0],
                      "auto_inline(x_exp)"));
  // The built-in CPU set keeps x_exp, and its candidates still compute softmax.
  ir::PrimFunc func = workload("softmax:shape=8x64,axis=1");
  std::vector<Sketch> builtin = generate_design_space(func, cpu, RuleSet::cpu());
  ASSERT_FALSE(builtin.empty());
  EXPECT_FALSE(applied(builtin[0], "auto_inline(x_exp)")) << script_of(builtin[0]);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CandidateResult c = sample_candidate(builtin[0], func, cpu, RuleSet::cpu(), seed);
    ASSERT_TRUE(c.ok()) << c.failure().message;
    EXPECT_TRUE(schedule::testing::same_outputs(func, c.candidate().func, seed, /*exact=*/false));
  }
}

TEST(ParallelVectorizeUnroll, AnnotatesTheRootWithASampledUnrollStep) {
  std::string gpu = script_of(space("relu:shape=64", only({"parallel_vectorize_unroll"}))[0]);
  EXPECT_TRUE(has_line(gpu, "sc [0 16 64 512 1024]") || gpu.find("sc [0 16 64 512 1024]") != std::string::npos) << gpu;
  EXPECT_NE(gpu.find("unrollx v"), std::string::npos) << gpu;
  std::string cpu = script_of(
      space("relu:shape=64", only({"parallel_vectorize_unroll"}, lower::Target::Kind::kCpu), lower::Target::cpu())[0]);
  EXPECT_NE(cpu.find("mspar 64"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("msvec 64"), std::string::npos) << cpu;
}

TEST(ParallelVectorizeUnroll, SamplesSerialOrParallelWhenAskedTo) {
  // sample_serial: the parallel extent is a decision, 1 or max_parallel_extent; candidates
  // of both kinds come out of the built-in CPU set and compute softmax.
  const lower::Target cpu = lower::Target::cpu();
  RuleSet set = only({"parallel_vectorize_unroll"}, lower::Target::Kind::kCpu);
  set.rules[0].params["sample_serial"] = true;
  std::string text = script_of(space("relu:shape=64", set, cpu)[0]);
  EXPECT_NE(text.find("sc [1 64]"), std::string::npos) << text;
  EXPECT_NE(text.find("mspar v"), std::string::npos) << text;

  ir::PrimFunc func = workload("softmax:shape=8x128,axis=1");
  std::vector<Sketch> sketches = generate_design_space(func, cpu, RuleSet::cpu());
  ASSERT_FALSE(sketches.empty());
  int serial = 0, parallel = 0;
  // Seeds spread over the range: the Lehmer engine's first draw from a small seed is
  // always near 0, and the parallel extent is the sketch's first decision.
  for (uint64_t n = 1; n <= 12; ++n) {
    uint64_t seed = n * 0x9E3779B1u % 2147483647u;
    CandidateResult c = sample_candidate(sketches[0], func, cpu, RuleSet::cpu(), seed);
    ASSERT_TRUE(c.ok()) << c.failure().message;
    std::string printed = ir::print_function(c.candidate().func);
    (printed.find("parallel") != std::string::npos ? parallel : serial) += 1;
    EXPECT_TRUE(schedule::testing::same_outputs(func, c.candidate().func, seed, /*exact=*/false));
  }
  EXPECT_GT(serial, 0);
  EXPECT_GT(parallel, 0);
}

TEST(RandomComputeLocation, SamplesWhereAProducerRuns) {
  std::string text = script_of(space("softmax:shape=8x64,axis=1", only({"random_compute_location"}))[0]);
  EXPECT_NE(text.find("scl b"), std::string::npos) << text;
  EXPECT_TRUE(space("relu:shape=64", only({"random_compute_location"}))[0].applied.empty());
}

TEST(AutoBind, BindsWhatNoRuleBoundWithASampledThreadCount) {
  std::string text = script_of(space("relu:shape=4096", only({"auto_bind"}))[0]);
  EXPECT_NE(text.find("sc [32 64 128 256 512 1024]"), std::string::npos) << text;
  EXPECT_EQ(count_lines(text, "bind"), 2) << text;
}

// Every scan kind along its innermost axis gets two staged sketches beside the untouched
// one: rows over blockIdx.x / threadIdx.x, the scan axis in chunks, the input copied into a
// padded shared tile per chunk by the block's threads, and in one of them the output
// written to a shared tile that the threads copy out per chunk. Their candidates lower for
// the H200 and compute the scan when their threads run one after another between barriers;
// the running value is carried in a register (no load of the output in the kernel, and the
// output's tile holds one chunk: its read of the previous element does not widen it).
TEST(StagedScan, StagesEveryScanKindsRowsInSharedChunks) {
  for (const char* spec : {"cumsum:shape=64x96,dim=1", "cumsum:shape=64x96,dim=1,reverse=true",
                           "cumsum:shape=64x96,dim=1,exclusive=true", "cumprod:shape=64x96,dim=1",
                           "masked_cumsum:shape=64x96,dim=1", "cumsum:shape=4x16x96,dim=2"}) {
    SCOPED_TRACE(spec);
    const ir::PrimFunc func = workload(spec);
    std::vector<Sketch> sketches = generate_design_space(func, kH200, RuleSet::cuda());
    int staged = 0, untouched = 0, output_staged = 0;
    for (const Sketch& sketch : sketches) {
      if (!applied(sketch, "staged_scan(Y)")) {
        ++untouched;
        continue;
      }
      ++staged;
      const std::string text = script_of(sketch);
      const bool stages_output = text.find("cw ") != std::string::npos;
      output_staged += stages_output ? 1 : 0;
      EXPECT_GE(count_lines(text, "cr "), 1) << text;  // the masked scan's two inputs, once inlined
      EXPECT_NE(text.find("shared"), std::string::npos) << text;
      EXPECT_NE(text.find(" 32 1\n"), std::string::npos) << "rows padded one word:\n" << text;
      for (int64_t seed = 1; seed <= 4; ++seed) {
        CandidateResult c = sample_candidate(sketch, func, kH200, RuleSet::cuda(), seed);
        ASSERT_TRUE(c.ok()) << c.failure().stage << ": " << c.failure().message << "\n" << text;
        std::vector<lower::testing::Stage> stages = lower::testing::lower_stages(c.candidate().func, kH200);
        const ir::PrimFunc& kernel = stages.back().func;
        EXPECT_EQ(lower::testing::loads_of(kernel, "Y"), 0) << ir::print_function(kernel);
        EXPECT_EQ(lower::testing::loads_of(kernel, "Y_shared") > 0, stages_output) << ir::print_function(kernel);
        // One chunk (at most 32 of the 96) of the block's rows (32 of 64), padded one word;
        // the whole scan axis would be 32 x 97.
        if (stages_output) EXPECT_LE(lower::testing::allocated_elements(kernel, "Y_shared"), 32 * 33);
        EXPECT_TRUE(lower::testing::close_outputs(func, lower::testing::serialize_between_barriers(kernel)))
            << ir::print_function(kernel);
      }
    }
    EXPECT_EQ(staged, 2);
    EXPECT_EQ(output_staged, 1);
    EXPECT_GE(untouched, 1);
  }
}

// A scan along an outer axis (its rows are not contiguous) and a non-scan get no sketch of it.
TEST(StagedScan, LeavesScansAlongOuterAxesAndOtherBlocksAlone) {
  for (const char* spec : {"cumsum:shape=96x64,dim=0", "cumsum:shape=4x96x8,dim=1", "softmax:shape=64x96,axis=1"}) {
    SCOPED_TRACE(spec);
    for (const Sketch& sketch : space(spec, only({"staged_scan"}))) EXPECT_FALSE(applied(sketch, "staged_scan(Y)"));
  }
}

// A scan of few rows over a long axis is chunked in every sketch: the axis split at a
// sampled chunk length, chunk_scan's totals and carries (chunked in turn in a fork), every
// block bound to threads by the rules after it. Candidates lower for the H200 and compute the scan, exactly on
// integers, with chunks that divide the axis and chunks that do not.
TEST(ChunkedScan, ChunksTheAxisOfAScanOfFewLongRows) {
  struct Case {
    const char* spec;
    const char* block;
  };
  for (const Case& c : {Case{"lengths_to_offsets:batch=20000,include_total=true,index_dtype=i32", "offsets"},
                        Case{"cumsum:shape=2x10240,dim=1,reverse=true", "Y"},
                        Case{"cumsum:shape=3x9000,dim=1,exclusive=true", "Y"}}) {
    SCOPED_TRACE(c.spec);
    const ir::PrimFunc func = workload(c.spec);
    std::vector<Sketch> sketches = generate_design_space(func, kH200, RuleSet::cuda());
    ASSERT_FALSE(sketches.empty());
    int nested = 0;  // sketches whose carries are chunked too
    for (const Sketch& sketch : sketches) {
      ASSERT_TRUE(applied(sketch, std::string("chunked_scan(") + c.block + ")")) << script_of(sketch);
      const std::string text = script_of(sketch);
      const int levels = count_lines(text, "cs ");
      EXPECT_TRUE(levels == 1 || levels == 2) << text;
      nested += levels == 2 ? 1 : 0;
      for (int64_t seed = 1; seed <= 3; ++seed) {
        CandidateResult r = sample_candidate(sketch, func, kH200, RuleSet::cuda(), seed);
        ASSERT_TRUE(r.ok()) << r.failure().stage << ": " << r.failure().message << "\n" << text;
        std::vector<lower::testing::Stage> stages = lower::testing::lower_stages(r.candidate().func, kH200);
        EXPECT_TRUE(lower::testing::close_outputs(func, lower::testing::serialize_between_barriers(stages.back().func)))
            << r.candidate().trace.to_string();
      }
    }
    EXPECT_GE(nested, 1) << "a fork chunks the carries too";
  }
}

// Scans of many rows (staged_scan's) or a short axis, and other blocks, are left alone.
TEST(ChunkedScan, LeavesScansOfManyRowsOrShortAxesAlone) {
  for (const char* spec : {"cumsum:shape=512x9000,dim=1", "cumsum:shape=4x4096,dim=1", "softmax:shape=4x9000,axis=1"}) {
    SCOPED_TRACE(spec);
    for (const Sketch& sketch : space(spec, only({"chunked_scan"}))) {
      EXPECT_EQ(script_of(sketch).find("cs "), std::string::npos) << script_of(sketch);
    }
  }
}

TEST(SamplingSites, NameWhatEachDecisionChanges) {
  std::vector<Sketch> s = space("matmul:m=128,n=128,k=128", RuleSet::cuda());
  ASSERT_FALSE(s.empty());
  std::map<SamplingRole, int> roles;
  for (const SamplingSite& site : sampling_sites(s[0].trace)) ++roles[site.role];
  EXPECT_EQ(roles[SamplingRole::kTileSize], 3);
  EXPECT_EQ(roles[SamplingRole::kVectorLength], 2);
  EXPECT_EQ(roles[SamplingRole::kUnroll], 1);
  EXPECT_EQ(roles[SamplingRole::kOther], 0);
  std::map<SamplingRole, int> relu;
  for (const SamplingSite& site : sampling_sites(space("relu:shape=4096", RuleSet::cuda())[0].trace)) ++relu[site.role];
  EXPECT_EQ(relu[SamplingRole::kThreadExtent], 1);
  EXPECT_EQ(relu[SamplingRole::kUnroll], 1);
}

}  // namespace
}  // namespace dragon::search
