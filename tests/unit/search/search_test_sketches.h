// Hand-made sketches for the search tests: a CPU matmul tiling (perfect tiles, parallel
// outer loop, vectorized inner loop, a sampled unroll), softmax with sampled compute
// locations, and AutoBind with a sampled thread count. Each is recorded through the
// Schedule API, so its trace carries decisions; sketch spaces drop them.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "dragon/search/rule_set.h"

namespace dragon::search::testing {

inline const lower::Target kH200 = lower::Target::cuda_h200();

// The built-in CUDA set with both f32 tensor-core variants. cuda.json samples only 3xTF32:
// one-pass TF32 failed the harness's f32 check on every GEMM measured (the H100,
// 2026-12-05: 5e-5 to 3e-4 of the output's scale against tolerances of 1e-5 to 2e-5), so
// tuning would spend measurements on it; the tests of the one-pass instruction still reach it.
inline const RuleSet& cuda_with_both_tf32_variants() {
  static const RuleSet set = RuleSet::parse(
      R"({"name": "cuda-tf32-both", "extends": "cuda",
          "set": [{"rule": "multi_level_tiling_tensor_core", "params": {"f32_intrins": ["tf32", "3xtf32"]}}]})",
      "search_test_sketches.h");
  return set;
}

// Whether the rule named `rule` ("multi_level_tiling_wgmma") shaped the sketch.
inline bool is_sketch_of_rule(const Sketch& s, const std::string& rule) {
  return std::any_of(s.applied.begin(), s.applied.end(), [&](const std::string& a) { return a.rfind(rule + "(", 0) == 0; });
}

// Whether multi_level_tiling_tensor_core made the sketch.
inline bool is_tensor_core_sketch(const Sketch& s) { return is_sketch_of_rule(s, "multi_level_tiling_tensor_core"); }

// The sketches of `func` on the H200 under `rules` that the rule named `rule` shaped.
inline std::vector<Sketch> sketches_of_rule(const ir::PrimFunc& func, const RuleSet& rules, const std::string& rule) {
  std::vector<Sketch> out;
  for (Sketch& s : generate_design_space(func, kH200, rules)) {
    if (is_sketch_of_rule(s, rule)) out.push_back(std::move(s));
  }
  return out;
}

// The sketches of `func` on the H200 under `rules` that multi_level_tiling_tensor_core made.
inline std::vector<Sketch> tensor_core_sketches_of(const ir::PrimFunc& func, const RuleSet& rules) {
  return sketches_of_rule(func, rules, "multi_level_tiling_tensor_core");
}

// The candidate of `sketch` at chosen decisions, as the expert scripts are made: its sampled
// perfect tiles replaced in order by `tiles` (*tiles_set says how many were), and each
// categorical decided as the candidate equal to want(role), where that gives one; replayed
// under `rules`.
// `want` also sees the categorical's candidates (two categoricals of one role, a pipeline
// depth and the tf32 passes, are told apart by them).
inline CandidateResult candidate_at_decisions(
    const Sketch& sketch, const ir::PrimFunc& func, const RuleSet& rules, const std::vector<std::vector<int64_t>>& tiles,
    const std::function<std::optional<int64_t>(SamplingRole, const std::vector<int64_t>&)>& want,
    size_t* tiles_set = nullptr) {
  // Any valid sample gives the trace whose decisions are then set (a random one may not
  // fit the GPU: a deep pipeline of wide tiles).
  CandidateResult first = sample_candidate(sketch, func, kH200, rules, 1);
  for (int64_t seed = 2; seed <= 64 && !first.ok(); ++seed) first = sample_candidate(sketch, func, kH200, rules, seed);
  if (!first.ok()) return first;
  const schedule::Trace sampled = first.candidate().trace;
  schedule::Trace trace = sampled;
  size_t tile = 0;
  for (const SamplingSite& site : sampling_sites(sampled)) {
    const schedule::Instruction& inst = sampled[site.instruction];
    if (inst.kind == schedule::InstructionKind::SamplePerfectTile && tile < tiles.size()) {
      schedule::Arg::List list;
      for (int64_t f : tiles[tile]) list.push_back(schedule::Arg(f));
      ++tile;
      trace = trace.with_decision(site.instruction, schedule::Arg(list));
      continue;
    }
    if (inst.kind != schedule::InstructionKind::SampleCategorical) continue;
    const auto& candidates = *inst.attrs.at(0).as<schedule::Arg::List>();
    std::vector<int64_t> values;
    for (const schedule::Arg& c : candidates) {
      if (const auto* v = c.as<int64_t>()) values.push_back(*v);
    }
    const std::optional<int64_t> value = want(site.role, values);
    if (!value) continue;
    for (size_t c = 0; c < candidates.size(); ++c) {
      const auto* candidate = candidates[c].as<int64_t>();
      if (candidate != nullptr && *candidate == *value) {
        trace = trace.with_decision(site.instruction, schedule::Arg(static_cast<int64_t>(c)));
      }
    }
  }
  if (tiles_set != nullptr) *tiles_set = tile;
  return replay_candidate(trace, func, kH200, rules);
}
inline CandidateResult candidate_at_decisions(const Sketch& sketch, const ir::PrimFunc& func, const RuleSet& rules,
                                              const std::vector<std::vector<int64_t>>& tiles,
                                              const std::function<std::optional<int64_t>(SamplingRole)>& want,
                                              size_t* tiles_set = nullptr) {
  return candidate_at_decisions(
      sketch, func, rules, tiles, [&](SamplingRole role, const std::vector<int64_t>&) { return want(role); },
      tiles_set);
}

// Matmul (block "C", loops i, j, k): i, j, k each split in two by sampled perfect tiles,
// reordered i0 j0 k0 i1 k1 j1, i0 parallel, j1 vectorized, and the root annotated with a
// sampled unroll depth (RewriteUnroll realises it).
inline schedule::Trace cpu_matmul_sketch(const ir::PrimFunc& func) {
  schedule::Schedule sch(func);
  schedule::BlockRV c = sch.get_block("C");
  schedule::BlockRV root = sch.get_block("root");
  std::vector<schedule::LoopRV> loops = sch.get_loops(c);
  auto tile = [&](schedule::LoopRV loop) {
    std::vector<schedule::ExprRV> f = sch.sample_perfect_tile(loop, 2, 64);
    return sch.split(loop, std::vector<schedule::SplitFactor>(f.begin(), f.end()));
  };
  std::vector<schedule::LoopRV> i = tile(loops[0]), j = tile(loops[1]), k = tile(loops[2]);
  sch.reorder({i[0], j[0], k[0], i[1], k[1], j[1]});
  sch.parallel(i[0]);
  sch.vectorize(j[1]);
  schedule::ExprRV unroll = sch.sample_categorical({0, 16, 64}, {1.0 / 3, 1.0 / 3, 1.0 / 3});
  sch.annotate(root, "meta_schedule.unroll_explicit", unroll);
  return sch.trace();
}

// Softmax: x_exp, exp_sum and x_max each computed at a sampled location (consumers first).
inline schedule::Trace softmax_location_sketch(const ir::PrimFunc& func) {
  schedule::Schedule sch(func);
  for (const char* name : {"x_exp", "exp_sum", "x_max"}) {
    schedule::BlockRV b = sch.get_block(name);
    schedule::LoopRV at = sch.sample_compute_location(b);
    sch.compute_at(b, at);
  }
  return sch.trace();
}

// AutoBind with the thread count sampled among 32..1024.
inline schedule::Trace gpu_autobind_sketch(const ir::PrimFunc& func) {
  schedule::Schedule sch(func);
  AutoBindOptions options;
  options.thread_extent_candidates = {32, 64, 128, 256, 512, 1024};
  auto_bind(sch, options);
  return sch.trace();
}

// Tensor-core convolutions small enough for the interpreter, at tiles that leave k steps
// to pipeline: one of whole tiles, one whose input padding and k (27 to 32) are padded.
struct PipelinedConv {
  const char* spec;
  bool padded;
  std::vector<std::vector<int64_t>> tiles;  // i, j, k in mma tiles; k steps of one mma k
};
inline const std::vector<PipelinedConv>& pipelined_convs() {
  static const std::vector<PipelinedConv> convs = {
      // m = 2 * 4 * 4 = 32, n = 16, k = 8 * 9 = 72: nine k steps.
      {"conv2d:batch=2,in_channels=8,out_channels=16,size=6x6,kernel=3x3,dtype=f32", false,
       {{1, 1, 2, 1, 1}, {1, 1, 2, 1, 1}, {9, 1, 1}}},
      // m = 128, n = 16, k = 27 padded to 32: four k steps.
      {"conv2d:batch=2,in_channels=3,out_channels=16,size=8x8,kernel=3x3,padding=1x1", true,
       {{2, 1, 2, 2, 1}, {1, 1, 2, 1, 1}, {4, 1, 1}}},
  };
  return convs;
}

// The mma.sync rule's candidate of `conv` (built-in CUDA set) at its tiles, pipelined
// `depth` k steps deep; f32 with 3xTF32 where `three_pass` (f32-close results), else as
// sampled. Of its two sketches, k in the declared order (the last), or with the kernel's
// taps outermost (`taps_outer`: the first, implicit_gemm.h's KOrder).
inline CandidateResult pipelined_conv_candidate(const PipelinedConv& conv, const ir::PrimFunc& func, int64_t depth,
                                                bool three_pass = false, bool taps_outer = false) {
  std::vector<Sketch> sketches = tensor_core_sketches_of(func, RuleSet::cuda());
  if (sketches.size() != 2) {
    return CandidateFailure{FailureKind::kReplay, "test", std::string(conv.spec) + ": not two tensor-core sketches"};
  }
  size_t tiles_set = 0;
  CandidateResult r = candidate_at_decisions(
      taps_outer ? sketches.front() : sketches.back(), func, RuleSet::cuda(), conv.tiles,
      [&](SamplingRole role, const std::vector<int64_t>& choices) -> std::optional<int64_t> {
        if (role == SamplingRole::kTileChoice && choices == std::vector<int64_t>{1, 2, 3}) return depth;
        if (three_pass && role == SamplingRole::kTileChoice && choices == std::vector<int64_t>{1, 3}) return 3;
        return std::nullopt;
      },
      &tiles_set);
  if (r.ok() && tiles_set != conv.tiles.size()) {
    return CandidateFailure{FailureKind::kReplay, "test", std::string(conv.spec) + ": the tiles did not all apply"};
  }
  return r;
}

}  // namespace dragon::search::testing
