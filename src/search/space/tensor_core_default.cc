// tensor_core_default (tensor_core_default.h): the tensor-core sketch under rule-of-thumb
// decisions.
#include "dragon/search/tensor_core_default.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "dragon/ir/op.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "dragon/search/rule_set.h"
#include "postproc/postproc.h"
#include "space/implicit_gemm.h"

namespace dragon::search {

using schedule::Arg;
using schedule::Instruction;
using schedule::InstructionKind;

namespace {

// The H200's and the H100's multiprocessors: a grid of fewer blocks than two waves of them
// leaves tensor cores idle.
constexpr int64_t kMultiprocessors = 132;
// A lane holds at most this many f32 accumulators: a 64 x 64 warp tile (128), under the
// 255 registers a thread has, with room for the fragments and addresses.
constexpr int64_t kMostAccumulatorsPerLane = 128;
constexpr int64_t kMostWarps = 8;
constexpr int64_t kMostWarpsAlongOneSide = 4;

std::vector<int64_t> divisors_up_to(int64_t n, int64_t most) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, most); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

int64_t largest_divisor_up_to(int64_t n, int64_t most) { return divisors_up_to(n, std::max<int64_t>(most, 1)).back(); }

double distance_in_octaves(double value, double ideal) { return std::abs(std::log2(value / ideal)); }


// Whether the sketch's only tiling is the mma.sync tensor-core rule's.
bool only_tensor_core_tiling(const Sketch& s) {
  bool tensor_core = false, other_tiling = false;
  for (const std::string& applied : s.applied) {
    if (applied.starts_with("multi_level_tiling_tensor_core(")) tensor_core = true;
    else if (applied.starts_with("multi_level_tiling")) other_tiling = true;
  }
  return tensor_core && !other_tiling;
}

// One tensor-core tiling of the sketch: its three SamplePerfectTile instructions (i, j, k)
// and the mma k-step of the instruction it tensorizes to.
struct TilingSite {
  size_t i = 0, j = 0, k = 0;
  int64_t i_extent = 1, j_extent = 1, k_extent = 1;
  int64_t max_innermost = 4;
  int64_t k_elements_per_step = 8;
};

int64_t recorded_extent(const schedule::Trace& trace, size_t index) {
  int64_t extent = 1;
  std::optional<Arg> recorded = trace.decision(index);
  if (const auto* list = recorded ? recorded->as<Arg::List>() : nullptr) {
    for (const Arg& f : *list) extent *= f.int_or(1);
  }
  return extent;
}

// The tensor-core rule samples its tiles as i (5 pieces), j (5), k (3), in that order, and
// annotates the block with its mma instruction after them. nullopt when any perfect tile
// of the sketch belongs to no such triple.
std::optional<std::vector<TilingSite>> tiling_sites(const schedule::Trace& trace) {
  const std::vector<Instruction>& insts = trace.instructions();
  const size_t end = trace.postproc_start().value_or(insts.size());
  std::vector<size_t> tiles;
  for (size_t n = 0; n < end; ++n) {
    if (insts[n].kind == InstructionKind::SamplePerfectTile) tiles.push_back(n);
  }
  if (tiles.empty() || tiles.size() % 3 != 0) return std::nullopt;
  auto pieces = [&](size_t index) { return insts[index].attrs.empty() ? 0 : insts[index].attrs[0].int_or(0); };
  std::vector<TilingSite> sites;
  for (size_t t = 0; t < tiles.size(); t += 3) {
    TilingSite site{tiles[t], tiles[t + 1], tiles[t + 2]};
    if (pieces(site.i) != 5 || pieces(site.j) != 5 || pieces(site.k) != 3) return std::nullopt;
    site.i_extent = recorded_extent(trace, site.i);
    site.j_extent = recorded_extent(trace, site.j);
    site.k_extent = recorded_extent(trace, site.k);
    if (insts[site.i].attrs.size() > 1) site.max_innermost = std::max<int64_t>(1, insts[site.i].attrs[1].int_or(4));
    const size_t next = t + 3 < tiles.size() ? tiles[t + 3] : end;
    for (size_t n = site.k + 1; n < next; ++n) {
      const Instruction& inst = insts[n];
      if (inst.kind != InstructionKind::Annotate || inst.inputs.size() < 2 || inst.attrs.empty()) continue;
      const auto* key = inst.attrs[0].as<std::string>();
      const auto* intrin = inst.inputs[1].as<std::string>();
      if (key != nullptr && intrin != nullptr && *key == kAutoTensorize && intrin->starts_with("mma_m16n8k")) {
        site.k_elements_per_step = intrin->starts_with("mma_m16n8k16") ? 16 : 8;
        break;
      }
    }
    sites.push_back(site);
  }
  return sites;
}

// The categorical decision (an index into its candidates) for a sampling site with this
// annotation: the deepest pipeline up to 3 stages, exact 3xTF32, the widest cooperative
// fetch, an unroll step of 64; nullopt keeps what the sketch recorded.
std::optional<int64_t> categorical_choice(const Instruction& inst, const std::string& annotation) {
  if (inst.attrs.empty()) return std::nullopt;
  const auto* list = inst.attrs[0].as<Arg::List>();
  if (list == nullptr || list->empty()) return std::nullopt;
  std::vector<int64_t> candidates;
  for (const Arg& a : *list) candidates.push_back(a.int_or(0));
  auto index_of_best = [&](auto better) {
    size_t best = 0;
    for (size_t c = 1; c < candidates.size(); ++c) {
      if (better(candidates[c], candidates[best])) best = c;
    }
    return static_cast<int64_t>(best);
  };
  if (annotation == kSoftwarePipelineDepth) {
    // The deepest of at most 3 stages; the shallowest when every candidate is deeper.
    return index_of_best([](int64_t a, int64_t b) {
      if ((a <= 3) != (b <= 3)) return a <= 3;
      return a <= 3 ? a > b : a < b;
    });
  }
  if (annotation == kTf32Passes || annotation == "meta_schedule.cooperative_fetch") {
    return index_of_best([](int64_t a, int64_t b) { return a > b; });
  }
  if (annotation == "meta_schedule.unroll_explicit" || annotation == "meta_schedule.unroll_implicit") {
    return index_of_best([](int64_t a, int64_t b) { return std::abs(a - 64) < std::abs(b - 64); });
  }
  return std::nullopt;
}

// The batch extent (the product of the batch loops: a batched matmul's batch) of the
// first block the tensor-core rule takes, or nullopt when it takes none.
std::optional<int64_t> tensor_core_batch(const ir::PrimFunc& func) {
  schedule::Schedule sch(func);
  for (schedule::BlockRV b : sch.get_child_blocks(sch.get_block("root"))) {
    std::optional<TensorCoreGemm> gemm = tensor_core_gemm(sch, sch.get(b)->name);
    if (!gemm) continue;
    const std::vector<schedule::LoopRV> loops = gemm->schedule.get_loops(gemm->schedule.get_block(sch.get(b)->name));
    int64_t batch = 1;
    for (size_t position : gemm->match.batch) {
      if (position < loops.size()) batch *= ir::as_const_int(gemm->schedule.get(loops[position])->extent).value_or(1);
    }
    return batch;
  }
  return std::nullopt;
}

}  // namespace

std::vector<TensorCoreTiles> ranked_tensor_core_tiles(int64_t i_tiles, int64_t j_tiles, int64_t k_tiles,
                                                      int64_t k_tiles_per_stage, int64_t max_innermost,
                                                      int64_t multiprocessors, size_t limit) {
  struct Scored {
    double cost;
    TensorCoreTiles tiles;
  };
  std::vector<Scored> scored;
  // The fragments are loaded per step of k's middle piece and hold its innermost piece's
  // k-steps: an innermost of 1 keeps a 64 x 64 warp's fragments at 32 registers beside its
  // 128 accumulators (4 k-steps there would need 128: past a thread's 255).
  const int64_t stage = largest_divisor_up_to(k_tiles, k_tiles_per_stage);
  const std::vector<int64_t> k = {k_tiles / stage, stage, 1};
  // A warp's tile: wm mma rows of 16, wn mma columns of 8; wy x wx warps a block.
  for (int64_t wm : divisors_up_to(i_tiles, 8)) {
    for (int64_t wn : divisors_up_to(j_tiles, 16)) {
      if (wm * 16 * wn * 8 / 32 > kMostAccumulatorsPerLane) continue;
      for (int64_t wy : divisors_up_to(i_tiles / wm, kMostWarpsAlongOneSide)) {
        for (int64_t wx : divisors_up_to(j_tiles / wn, kMostWarpsAlongOneSide)) {
          const int64_t warps = wy * wx;
          if (warps > kMostWarps) continue;
          const int64_t blocks = (i_tiles / (wm * wy)) * (j_tiles / (wn * wx));
          double cost = distance_in_octaves(static_cast<double>(wm * 16), 64) +
                        distance_in_octaves(static_cast<double>(wn * 8), 64) +
                        0.5 * distance_in_octaves(static_cast<double>(warps), 4) +
                        // square blocks: each operand tile serves as many mma as the other
                        0.25 * distance_in_octaves(static_cast<double>(wm * 16 * wy), static_cast<double>(wn * 8 * wx));
          if (multiprocessors > 0) {
            const double waves = static_cast<double>(blocks) / static_cast<double>(2 * multiprocessors);
            if (waves < 1) cost += std::log2(1 / waves);
          }
          const int64_t i_inner = largest_divisor_up_to(wm, max_innermost);
          const int64_t j_inner = largest_divisor_up_to(wn, max_innermost);
          TensorCoreTiles t;
          t.i = {i_tiles / (wm * wy), 1, wy, wm / i_inner, i_inner};
          t.j = {j_tiles / (wn * wx), 1, wx, wn / j_inner, j_inner};
          t.k = k;
          scored.push_back({cost, std::move(t)});
        }
      }
    }
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) { return a.cost < b.cost; });
  std::vector<TensorCoreTiles> out;
  for (size_t n = 0; n < scored.size() && out.size() < limit; ++n) out.push_back(std::move(scored[n].tiles));
  return out;
}

namespace {

// `sketch` under the ranked tilings, the first that replays and passes the postprocessors;
// nullopt when its tiles are not the tensor-core rule's alone, a GEMM has more than
// `max_k_steps` k-steps, or no tiling fits.
std::optional<schedule::Schedule> schedule_sketch(const Sketch& sketch, const ir::PrimFunc& func,
                                                  const lower::Target& target, const RuleSet& rules, int64_t batch,
                                                  int64_t max_k_steps) {
  const std::optional<std::vector<TilingSite>> sites = tiling_sites(sketch.trace);
  if (!sites) return std::nullopt;
  // A split-K sketch (add_rfactor) computes its chunks as a batch of GEMMs, one grid row
  // each: its tiles need not be small to fill the GPU.
  const bool split_k = std::any_of(sketch.applied.begin(), sketch.applied.end(),
                                   [](const std::string& a) { return a.starts_with("add_rfactor("); });
  const int64_t fill_multiprocessors = split_k ? 0 : kMultiprocessors / std::max<int64_t>(batch, 1);

  schedule::Trace fixed = sketch.trace.without_postproc();
  for (const SamplingSite& s : sampling_sites(fixed)) {
    if (fixed[s.instruction].kind != InstructionKind::SampleCategorical) continue;
    if (std::optional<int64_t> choice = categorical_choice(fixed[s.instruction], s.annotation)) {
      fixed = fixed.with_decision(s.instruction, Arg(*choice));
    }
  }
  // Each tiling's ranked choices, tried in rank order (all tilings at the same rank).
  constexpr size_t kTries = 8;
  std::vector<std::vector<TensorCoreTiles>> ranked;
  for (const TilingSite& site : *sites) {
    if (site.k_extent > max_k_steps) return std::nullopt;
    const int64_t k_tiles_per_stage = std::max<int64_t>(1, 32 / site.k_elements_per_step);
    ranked.push_back(ranked_tensor_core_tiles(site.i_extent, site.j_extent, site.k_extent, k_tiles_per_stage,
                                              site.max_innermost, fill_multiprocessors, kTries));
    if (ranked.back().empty()) return std::nullopt;
  }
  for (size_t rank = 0; rank < kTries; ++rank) {
    schedule::Trace trace = fixed;
    bool any = false;
    for (size_t t = 0; t < sites->size(); ++t) {
      const std::vector<TensorCoreTiles>& choices = ranked[t];
      if (rank < choices.size()) any = true;
      const TensorCoreTiles& tiles = choices[std::min(rank, choices.size() - 1)];
      trace = trace.with_decision((*sites)[t].i, Arg::int_list(tiles.i));
      trace = trace.with_decision((*sites)[t].j, Arg::int_list(tiles.j));
      trace = trace.with_decision((*sites)[t].k, Arg::int_list(tiles.k));
    }
    if (!any) break;
    CandidateResult result = replay_candidate(trace, func, target, rules);
    if (!result.ok()) continue;
    schedule::Schedule sch(func);
    result.candidate().trace.apply_to(sch);
    return sch;
  }
  return std::nullopt;
}

}  // namespace

std::optional<schedule::Schedule> tensor_core_default(const ir::PrimFunc& func, const lower::Target& target,
                                                      int64_t max_k_steps) {
  if (!target.is_gpu()) return std::nullopt;
  const std::optional<int64_t> batch = tensor_core_batch(func);
  if (!batch) return std::nullopt;
  const RuleSet& rules = RuleSet::cuda();
  // The space's tensor-core sketches in order: a GEMM too long for one lane's serial adds
  // may have a split-K sketch (add_rfactor's partial sums) that is not.
  for (const Sketch& sketch : generate_design_space(func, target, rules)) {
    if (!only_tensor_core_tiling(sketch)) continue;
    if (std::optional<schedule::Schedule> sch = schedule_sketch(sketch, func, target, rules, *batch, max_k_steps)) {
      return sch;
    }
  }
  return std::nullopt;
}

}  // namespace dragon::search
