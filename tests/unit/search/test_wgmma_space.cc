// The wgmma rule of the design space (space/multi_level_tiling_wgmma.cc): on the H200 it
// offers Hopper's warpgroup MMA for f16/bf16 GEMMs (batch matmul too) whose B is stored
// [n, k] and whose extents divide (m by 64, n by a sampled N, k by 64; other shapes padded
// to them within twice the work: test_implicit_gemm_space.cc), beside the mma.sync
// rule and plain tiling; elsewhere it leaves no trace. Sampled candidates replay, compute
// the GEMM on the interpreter, lower for the H200, have cost-model features and print as
// warpgroup code (at the expert script's decisions, the expert's kernel); their decisions
// (warpgroups, N, pipeline depth) are what mutators redraw, and a decision past the shared
// memory or the register file of a thread block is rejected by verify_gpu_code. NVRTC compiles of
// such candidates are in test_search_nvrtc, runs on the H200 in tests/gpu/test_gpu_wgmma.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "dragon/codegen/cuda_codegen.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/search/design_space.h"
#include "dragon/search/mutator.h"
#include "dragon/search/postproc.h"
#include "dragon/search/program_features.h"
#include "dragon/support/file.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/schedule/schedule_test_util.h"
#include "unit/search/search_test_sketches.h"

namespace dragon::search {
namespace {

using schedule::testing::workload;
using testing::kH200;

constexpr const char* kGemm4096 = "matmul:m=4096,n=4096,k=4096,trans_b=true,dtype=f16";

std::string script_of(const schedule::Trace& trace) { return script::encode(trace); }

bool is_wgmma_sketch(const Sketch& s) {
  return std::any_of(s.applied.begin(), s.applied.end(),
                     [](const std::string& a) { return a.starts_with("multi_level_tiling_wgmma("); });
}

std::vector<Sketch> wgmma_sketches(const std::string& spec, const RuleSet& rules = RuleSet::cuda(),
                                   const lower::Target& target = kH200) {
  std::vector<Sketch> out;
  for (Sketch& s : generate_design_space(workload(spec), target, rules)) {
    if (is_wgmma_sketch(s)) out.push_back(std::move(s));
  }
  return out;
}

// The sampled decisions of a candidate: its categoricals, in trace order.
std::vector<int64_t> categoricals(const schedule::Trace& trace) {
  std::vector<int64_t> out;
  for (const SamplingSite& site : sampling_sites(trace)) {
    const schedule::Instruction& inst = trace[site.instruction];
    if (inst.kind != schedule::InstructionKind::SampleCategorical) continue;
    const auto* index = trace.decision(site.instruction)->as<int64_t>();
    const auto* candidates = inst.attrs.at(0).as<schedule::Arg::List>();
    if (index == nullptr || candidates == nullptr) continue;
    const auto* value = candidates->at(static_cast<size_t>(*index)).as<int64_t>();
    if (value != nullptr) out.push_back(*value);
  }
  return out;
}

// A RuleSet::cuda() whose wgmma rule draws from the given sets.
RuleSet cuda_with_wgmma(std::vector<int64_t> warpgroups, std::vector<int64_t> n_tiles, std::vector<int64_t> stages) {
  RuleSet rules = RuleSet::cuda();
  for (RuleSpec& r : rules.rules) {
    if (r.rule != "multi_level_tiling_wgmma") continue;
    r.params["warpgroups"] = warpgroups;
    r.params["n_tiles"] = n_tiles;
    r.params["pipeline_stages"] = stages;
  }
  return rules;
}

TEST(MultiLevelTilingWgmma, OffersWarpgroupMmaBesideMmaSyncAndPlainTiling) {
  for (const char* spec : {kGemm4096, "matmul:m=4096,n=4096,k=4096,trans_b=true,dtype=bf16",
                           "batch_matmul:batch=2,m=128,n=256,k=128,trans_b=true,dtype=f16"}) {
    SCOPED_TRACE(spec);
    std::vector<Sketch> all = generate_design_space(workload(spec), kH200, RuleSet::cuda());
    int wgmma = 0, mma = 0;
    for (const Sketch& s : all) {
      std::string text = script_of(s.trace);
      if (is_wgmma_sketch(s)) {
        ++wgmma;
        EXPECT_NE(text.find("autotc wgmma_m64nNk16_"), std::string::npos) << text;
        EXPECT_NE(text.find("autotc wgmma_store_m64n8_f32"), std::string::npos) << text;
        EXPECT_NE(text.find("cr b0 0 shdyn b0"), std::string::npos) << text;
        EXPECT_NE(text.find("cr b0 1 shdyn b0"), std::string::npos) << text;
        EXPECT_NE(text.find("cw b0 0 warp"), std::string::npos) << text;
        EXPECT_NE(text.find("meta_schedule.software_pipeline_depth"), std::string::npos) << text;
        EXPECT_NE(text.find("sc [2 3 4]"), std::string::npos) << text;  // the pipeline depth
      }
      if (text.find("autotc mma_m16n8k16_") != std::string::npos) ++mma;
    }
    EXPECT_EQ(wgmma, 1);
    EXPECT_GE(mma, 1) << "the mma.sync rule stays in the space";
    EXPECT_GE(all.size(), 3u);
  }
}

TEST(MultiLevelTilingWgmma, LeavesOtherShapesTypesAndTargetsAlone) {
  // Shapes whose padding to whole tiles would more than double the work (kMaxPaddedWork):
  // m = 16 to 64, k = 16 to 64 (the swizzled rows), n = 48 to the smallest N, 128 (padded
  // within it: test_implicit_gemm_space.cc); f32 inputs. (B stored [k, n] is read through
  // its reindexed copy: SampledCandidatesComputeTheGemmOnTheInterpreter.)
  for (const char* spec : {"matmul:m=16,n=256,k=256,trans_b=true,dtype=f16",
                           "matmul:m=128,n=256,k=16,trans_b=true,dtype=f16",
                           "matmul:m=128,n=48,k=128,trans_b=true,dtype=f16",
                           "matmul:m=128,n=256,k=128,trans_b=true"}) {
    SCOPED_TRACE(spec);
    EXPECT_TRUE(wgmma_sketches(spec).empty());
  }
  // [k, n] and m % 64 != 0 still get the mma.sync tensor cores.
  for (const char* spec : {"matmul:m=4096,n=4096,k=4096,dtype=f16", "matmul:m=16,n=256,k=256,trans_b=true,dtype=f16"}) {
    bool mma = false;
    for (const Sketch& s : generate_design_space(workload(spec), kH200, RuleSet::cuda())) {
      mma = mma || script_of(s.trace).find("autotc mma_m16n8k16_") != std::string::npos;
    }
    EXPECT_TRUE(mma) << spec;
  }
  // Only sm_90: another CUDA architecture has no wgmma.
  lower::Target ampere = kH200;
  ampere.arch = "sm_80";
  EXPECT_TRUE(wgmma_sketches(kGemm4096, RuleSet::cuda(), ampere).empty());
}

// The role sampling_sites gives each categorical of the sketch, by its candidates.
std::map<std::vector<int64_t>, SamplingRole> categorical_roles(const schedule::Trace& trace) {
  std::map<std::vector<int64_t>, SamplingRole> out;
  for (const SamplingSite& site : sampling_sites(trace)) {
    const schedule::Instruction& inst = trace[site.instruction];
    if (inst.kind != schedule::InstructionKind::SampleCategorical) continue;
    std::vector<int64_t> candidates;
    for (const schedule::Arg& a : *inst.attrs.at(0).as<schedule::Arg::List>()) candidates.push_back(*a.as<int64_t>());
    out[candidates] = site.role;
  }
  return out;
}

TEST(MultiLevelTilingWgmma, DecisionsAreWhatMutatorsRedraw) {
  std::vector<Sketch> s = wgmma_sketches(kGemm4096);
  ASSERT_EQ(s.size(), 1u);
  std::map<std::vector<int64_t>, SamplingRole> roles = categorical_roles(s[0].trace);
  // Warpgroups: a thread extent (mutate_thread_binding); N and the pipeline depth: tile
  // choices (mutate_tile_size).
  EXPECT_EQ(roles.at({1, 2}), SamplingRole::kThreadExtent);
  EXPECT_EQ(roles.at({128, 256}), SamplingRole::kTileChoice);
  EXPECT_EQ(roles.at({2, 3, 4}), SamplingRole::kTileChoice);
  // mutate_tile_size moves a candidate to the other N or another depth, and the mutated
  // trace replays into a wgmma candidate of that N and depth.
  ir::PrimFunc func = workload(kGemm4096);
  CandidateResult first = sample_candidate(s[0], func, kH200, RuleSet::cuda(), 3);
  ASSERT_TRUE(first.ok()) << first.failure().message;
  const std::vector<int64_t> before = categoricals(first.candidate().trace);
  std::unique_ptr<Mutator> mutate = make_mutate_tile_size();
  schedule::RandomEngine rng(5);
  std::set<size_t> changed;  // which of warpgroups, N, depth a mutation changed
  for (int round = 0; round < 40; ++round) {
    std::optional<schedule::Trace> t = mutate->apply(first.candidate().trace, func, rng);
    ASSERT_TRUE(t.has_value());
    CandidateResult r = replay_candidate(*t, func, kH200, RuleSet::cuda());
    ASSERT_TRUE(r.ok()) << r.failure().message;
    std::vector<int64_t> after = categoricals(r.candidate().trace);
    ASSERT_EQ(after.size(), before.size());
    for (size_t d = 0; d < 3; ++d) {
      if (after[d] != before[d]) changed.insert(d);
    }
    std::string text = script_of(r.candidate().trace);
    EXPECT_NE(text.find("wgmma_m64n" + std::to_string(after[1]) + "k16_f16f16f32_trans_b"), std::string::npos);
    EXPECT_NE(text.find("swstage \"0 0 " + std::to_string(after[2] - 1) + "\""), std::string::npos) << text;
  }
  EXPECT_EQ(changed, (std::set<size_t>{1, 2})) << "N and the depth move; warpgroups is mutate_thread_binding's";
  // mutate_thread_binding redraws the warpgroups (or the output cast's thread count), and
  // the mutated trace replays with the copies spread over the new thread count.
  std::unique_ptr<Mutator> rebind = make_mutate_thread_binding();
  bool warpgroups_moved = false;
  for (int round = 0; round < 20; ++round) {
    std::optional<schedule::Trace> t = rebind->apply(first.candidate().trace, func, rng);
    ASSERT_TRUE(t.has_value());
    CandidateResult r = replay_candidate(*t, func, kH200, RuleSet::cuda());
    ASSERT_TRUE(r.ok()) << r.failure().message;
    std::vector<int64_t> after = categoricals(r.candidate().trace);
    if (after[0] == before[0]) continue;
    warpgroups_moved = true;
    codegen::CudaSource src = codegen::generate_cuda(lower::lower(r.candidate().func, kH200).func, kH200);
    EXPECT_EQ(src.kernels[0].block, (std::array<int64_t, 3>{128, after[0], 1}));
  }
  EXPECT_TRUE(warpgroups_moved);
}

// Candidates of `sketch` at seeds 0.. until `want` with distinct decisions are found.
std::vector<SpaceCandidate> distinct_candidates(const Sketch& sketch, const ir::PrimFunc& func, const RuleSet& rules,
                                                size_t want, int max_seeds = 64) {
  std::vector<SpaceCandidate> out;
  std::set<std::vector<int64_t>> seen;
  for (int seed = 0; seed < max_seeds && out.size() < want; ++seed) {
    CandidateResult r = sample_candidate(sketch, func, kH200, rules, seed);
    EXPECT_TRUE(r.ok()) << "seed " << seed << ": " << (r.ok() ? "" : r.failure().message);
    if (!r.ok()) continue;
    std::vector<int64_t> d = categoricals(r.candidate().trace);
    d.pop_back();  // the unroll step does not change the wgmma structure
    if (seen.insert(d).second) out.push_back(r.candidate());
  }
  return out;
}

TEST(MultiLevelTilingWgmma, SampledCandidatesReplayLowerAndPrintAsWarpgroupCode) {
  ir::PrimFunc func = workload(kGemm4096);
  std::vector<Sketch> s = wgmma_sketches(kGemm4096);
  ASSERT_EQ(s.size(), 1u);
  // Every combination of 2 warpgroup counts, 2 N and 3 depths fits the H200: 12.
  std::vector<SpaceCandidate> candidates = distinct_candidates(s[0], func, RuleSet::cuda(), 12, 200);
  EXPECT_EQ(candidates.size(), 12u);
  std::set<int64_t> n_seen;
  for (const SpaceCandidate& c : candidates) {
    std::string text = script_of(c.trace);
    SCOPED_TRACE(text);
    std::vector<int64_t> d = categoricals(c.trace);
    ASSERT_GE(d.size(), 3u);
    const int64_t warpgroups = d[0], n = d[1], depth = d[2];
    n_seen.insert(n);
    // The update tensorized with the sampled N, the init and store in 64 x 8 tiles, the
    // k-step loop a pipeline of the sampled depth.
    EXPECT_NE(text.find("tz l"), std::string::npos);
    EXPECT_NE(text.find("wgmma_m64n" + std::to_string(n) + "k16_f16f16f32_trans_b"), std::string::npos);
    EXPECT_NE(text.find("wgmma_fill_m64n8_f32"), std::string::npos);
    EXPECT_NE(text.find("swstage \"0 0 " + std::to_string(depth - 1) + "\""), std::string::npos);
    // The trace replays to the same program.
    CandidateResult again = replay_candidate(c.trace, func, kH200, RuleSet::cuda());
    ASSERT_TRUE(again.ok()) << again.failure().message;
    EXPECT_EQ(script_of(again.candidate().trace), text);
    // The cost model reads it (search ranks candidates by these rows).
    EXPECT_GT(extract_program_features(c.func, kH200).rows(), 0);
    // Lowered for the H200 and printed: one wgmma of the sampled shape, 128 x warpgroups
    // threads, the pipeline's shared tiles.
    codegen::CudaSource src = codegen::generate_cuda(lower::lower(c.func, kH200).func, kH200);
    EXPECT_NE(src.code.find("wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32.f16.f16"),
              std::string::npos);
    EXPECT_EQ(src.code.find("mma.sync"), std::string::npos);
    ASSERT_FALSE(src.kernels.empty());
    EXPECT_EQ(src.kernels[0].block, (std::array<int64_t, 3>{128, warpgroups, 1}));
    EXPECT_EQ(src.kernels[0].dynamic_shared_bytes, depth * (64 * warpgroups + n) * 64 * 2);
  }
  EXPECT_EQ(n_seen, (std::set<int64_t>{128, 256}));
}

TEST(MultiLevelTilingWgmma, SampledCandidatesComputeTheGemmOnTheInterpreter) {
  // The last two store B [k, n]: a GEMM of whole tiles has its operands reindexed all the
  // same, so the threads' copies lay B out [n, k] in the shared tile, as wgmma reads it
  // (the epilogue of a matmul_bias_act stays a kernel of its own).
  for (const char* spec : {"matmul:m=128,n=256,k=256,trans_b=true,dtype=f16",
                           "matmul:m=128,n=256,k=128,trans_b=true,dtype=bf16",
                           "batch_matmul:batch=2,m=128,n=128,k=128,trans_b=true,dtype=f16",
                           "matmul:m=128,n=128,k=128,dtype=f16",
                           "matmul_bias_act:m=64,n=128,k=64,activation=relu,dtype=bf16"}) {
    SCOPED_TRACE(spec);
    ir::PrimFunc func = workload(spec);
    std::vector<Sketch> s = wgmma_sketches(spec);
    ASSERT_EQ(s.size(), 1u);
    std::vector<SpaceCandidate> candidates = distinct_candidates(s[0], func, RuleSet::cuda(), 3);
    ASSERT_FALSE(candidates.empty());
    for (const SpaceCandidate& c : candidates) {
      std::vector<tensor::HostTensor> expected = interp::make_arguments(func, 3, interp::Distribution::kNormal);
      std::vector<tensor::HostTensor> actual = expected;
      interp::run(func, expected);
      interp::run(c.func, actual);
      EXPECT_TRUE(codegen::testing::outputs_match(func, expected, actual)) << script_of(c.trace);
    }
  }
}

TEST(MultiLevelTilingWgmma, VerifyGpuCodeRejectsPipelinesPastSharedMemoryAndTilesPastTheRegisterFile) {
  // 4 warpgroups x N 256, 4 stages: 4 x (256 + 256) rows x 128 bytes = 256 KiB, above the
  // H200's 227 KB; 3 stages (192 KiB) fit.
  ir::PrimFunc func = workload(kGemm4096);
  RuleSet too_deep = cuda_with_wgmma({4}, {256}, {4});
  std::vector<Sketch> s = wgmma_sketches(kGemm4096, too_deep);
  ASSERT_EQ(s.size(), 1u);
  CandidateResult r = sample_candidate(s[0], func, kH200, too_deep, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure().stage, "verify_gpu_code");
  EXPECT_NE(r.failure().message.find("262144 bytes of shared memory, above the limit 232448"), std::string::npos)
      << r.failure().message;
  // 3 stages fit shared memory, but 4 warpgroups of 64 x 256 accumulators (128 registers a
  // thread, 512 threads) do not fit the register file.
  RuleSet too_many_registers = cuda_with_wgmma({4}, {256}, {3});
  CandidateResult wide = sample_candidate(wgmma_sketches(kGemm4096, too_many_registers)[0], func, kH200,
                                          too_many_registers, 1);
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.failure().stage, "verify_gpu_code");
  EXPECT_NE(wide.failure().message.find("about 160 registers per thread for 512 threads"), std::string::npos)
      << wide.failure().message;
  // 4 warpgroups of 64 x 128 (64 registers a thread), 3 stages: 144 KiB, fits.
  RuleSet fits = cuda_with_wgmma({4}, {128}, {3});
  CandidateResult ok = sample_candidate(wgmma_sketches(kGemm4096, fits)[0], func, kH200, fits, 1);
  EXPECT_TRUE(ok.ok()) << (ok.ok() ? "" : ok.failure().message);
}

// The trimmed lines of `code` that call a helper of the prelude (copies, fences, wgmma,
// fills, stores, barriers), sorted: what a kernel does, whatever its loops are named.
std::vector<std::string> helper_calls(const std::string& code) {
  std::vector<std::string> out;
  size_t at = code.find("__global__");
  while (at < code.size()) {
    size_t end = code.find('\n', at);
    if (end == std::string::npos) end = code.size();
    std::string line = code.substr(at, end - at);
    line.erase(0, line.find_first_not_of(' '));
    if (line.rfind("dragon_", 0) == 0) out.push_back(line);
    at = end + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(MultiLevelTilingWgmma, TheCandidateAtTheExpertsDecisionsIsTheExpertKernel) {
  // Two warpgroups, N 256, 3 stages: the decisions of gemm_f16_wgmma_pipe3_128x256.script
  // (0.588x cuBLAS on the H200). Same launch, same copies, wgmma calls, fills and stores.
  ir::PrimFunc func = workload(kGemm4096);
  RuleSet rules = cuda_with_wgmma({2}, {256}, {3});
  CandidateResult r = sample_candidate(wgmma_sketches(kGemm4096, rules)[0], func, kH200, rules, 1);
  ASSERT_TRUE(r.ok()) << r.failure().message;
  schedule::Schedule expert(func);
  script::decode(read_text_file(std::string(DRAGON_SOURCE_DIR) +
                                "/data/scripts/expert/gpu/gemm_f16_wgmma_pipe3_128x256.script"))
      .apply_to(expert);
  codegen::CudaSource found = codegen::generate_cuda(lower::lower(r.candidate().func, kH200).func, kH200);
  codegen::CudaSource written = codegen::generate_cuda(lower::lower(expert.func(), kH200).func, kH200);
  ASSERT_EQ(found.kernels.size(), written.kernels.size());
  EXPECT_EQ(found.kernels[0].grid, written.kernels[0].grid);
  EXPECT_EQ(found.kernels[0].block, written.kernels[0].block);
  EXPECT_EQ(found.kernels[0].dynamic_shared_bytes, written.kernels[0].dynamic_shared_bytes);
  EXPECT_EQ(found.kernels[0].dynamic_shared_bytes, 3 * (128 + 256) * 64 * 2);
  std::vector<std::string> calls = helper_calls(found.code);
  EXPECT_EQ(calls, helper_calls(written.code));
  EXPECT_GE(calls.size(), 8u);
}

TEST(RewriteSoftwarePipeline, ADepthOfOneLeavesTheLoopSerialAndTheAnnotationGoes) {
  ir::PrimFunc func = workload(kGemm4096);
  RuleSet rules = cuda_with_wgmma({2}, {128}, {1});
  CandidateResult r = sample_candidate(wgmma_sketches(kGemm4096, rules)[0], func, kH200, rules, 1);
  ASSERT_TRUE(r.ok()) << r.failure().message;
  std::string text = script_of(r.candidate().trace);
  EXPECT_EQ(text.find("swstage"), std::string::npos) << text;
  // The depth annotation is gone from the candidate's IR (lowering would not know it).
  EXPECT_EQ(ir::print_function(r.candidate().func).find("software_pipeline_depth"), std::string::npos);
  codegen::CudaSource src = codegen::generate_cuda(lower::lower(r.candidate().func, kH200).func, kH200);
  EXPECT_EQ(src.kernels[0].dynamic_shared_bytes, (128 + 128) * 64 * 2);  // one stage
  EXPECT_EQ(src.code.find("cp.async.wait_group"), std::string::npos);
}

TEST(MultiLevelTilingWgmma, TheDecisionSamplerCountsAWarpgroupAs128Threads) {
  // Sketched for the H200 with up to 4 warpgroups, drawn for a GPU of 256 threads a block:
  // the sampler keeps to 1 or 2 warpgroups (128 threads each), so every draw passes
  // verify_gpu_code (counting a warpgroup as one 32-lane warp, 4 would look like 128).
  ir::PrimFunc func = workload(kGemm4096);
  RuleSet rules = cuda_with_wgmma({1, 2, 4}, {128}, {2});
  std::vector<Sketch> s = wgmma_sketches(kGemm4096, rules);
  ASSERT_EQ(s.size(), 1u);
  lower::Target small = kH200;
  small.max_threads_per_block = 256;
  std::set<int64_t> warpgroups;
  for (int seed = 0; seed < 24; ++seed) {
    CandidateResult r = sample_candidate(s[0], func, small, rules, seed);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.failure().message;
    warpgroups.insert(categoricals(r.candidate().trace).at(0));
  }
  EXPECT_EQ(warpgroups, (std::set<int64_t>{1, 2}));
}

}  // namespace
}  // namespace dragon::search

