// MultiLevelTilingWgmma: Hopper's warpgroup MMA (wgmma.mma_async, sm_90a) for GEMM-shaped
// blocks, in the structure of the wgmma expert scripts (tests/unit/schedule/
// wgmma_gemm_sketch.h): C[.., i, j] += f32(A[.., i, k]) * f32(B[.., j, k]) with f16 or bf16
// inputs is cut into a thread block tile of (64 x warpgroups) x N, each warpgroup (128
// threads, threadIdx.x, warpgroups along threadIdx.y) one 64 x N accumulator in registers
// ("warp"); A and B staged per k step of 64 in shared.dyn tiles whose rows are exactly 64
// halves (the 128-byte swizzled K-major layout wgmma's descriptors read; the emitter
// swizzles them), each thread copying 16 bytes at a time; the k-step loop annotated with a
// sampled software-pipeline depth (rewrite_software_pipeline turns it into stages: the
// copies cp.async in stage 0, the wgmma loop in the last). Decisions, each a categorical a
// mutator redraws: the warpgroups (thread extent), the wgmma N (a tile choice) and the
// pipeline depth; the values that do not divide the block's extents are left out when
// sampling. Shared memory above the target's limit (deep pipelines of wide tiles) is
// rejected by verify_gpu_code. Forks {wgmma, untouched}: the untouched schedule goes on to
// the mma.sync rule and plain tiling. Applies only on sm_90 targets, to B stored [n, k]
// (the intrinsics read both operands K-major; a B stored [k, n] would need a transposed
// descriptor, which the intrinsics do not offer yet) with i % 64, j % (some N), k % 64.
// A convolution-like block is presented as a GEMM first (implicit_gemm.h: B becomes
// [n, k]), its operand copies inlined into the shared tiles' copies, and its output staged
// through a shared tile into C (stage_output_tile, implicit_gemm.h). Shapes that are not
// whole tiles are padded to them (pad_to_tiles, implicit_gemm.h: i to 64 times the fewest
// warpgroups, j to the smallest N tile, k to 64) unless that would more than double the work.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/lower/passes.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/support/error.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"
#include "space/gemm_match.h"
#include "space/implicit_gemm.h"
#include "space/rule.h"

namespace dragon::search {

namespace {

using schedule::BlockRV;
using schedule::ExprRV;
using schedule::LoopRV;
using schedule::None;
using schedule::Schedule;

constexpr int64_t kWarpgroupLanes = 128;
constexpr int64_t kSharedRow = 64;     // halves in a 128-byte swizzled row: the k step
constexpr int64_t kCopyVector = 8;     // halves a thread copies at once (16 bytes)

struct WgmmaOptions {
  std::vector<int64_t> warpgroups{1, 2};
  std::vector<int64_t> n_tiles{128, 256};
  std::vector<int64_t> pipeline_stages{2, 3, 4};
};

// The values of `all` that divide `extent` in units of `unit`.
std::vector<int64_t> dividing(const std::vector<int64_t>& all, int64_t extent, int64_t unit) {
  std::vector<int64_t> out;
  for (int64_t v : all) {
    if (v > 0 && extent % (v * unit) == 0) out.push_back(v);
  }
  return out;
}

ExprRV sample_uniform(Schedule& s, const std::vector<int64_t>& candidates) {
  return s.sample_categorical(candidates, std::vector<double>(candidates.size(), 1.0 / candidates.size()));
}

class MultiLevelTilingWgmma : public ScheduleRule {
 public:
  MultiLevelTilingWgmma(WgmmaOptions options, lower::Target target)
      : options_(std::move(options)), target_(std::move(target)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    if (target_.arch.rfind("sm_90", 0) != 0) return {};
    // A GEMM, or a convolution-like block presented as one (implicit_gemm.h), whose
    // reindexed B is [n, k], what wgmma reads.
    std::optional<TensorCoreGemm> gemm = tensor_core_gemm(sch, block);
    if (!gemm) return {};
    // wgmma here is f16/bf16 only (no tf32 family yet).
    if (gemm->match.dtype == ir::DataType::f32() || options_.n_tiles.empty() || options_.warpgroups.empty()) return {};
    // Shapes that are not whole tiles (i of 64 per warpgroup, j of the smallest N tile, k of
    // the 64-wide shared step) are padded to them unless that would more than double the
    // work (kMaxPaddedWork, implicit_gemm.h). A padded plain GEMM's B is reindexed [n, k].
    const GemmMatch& before = gemm->match;
    const bool whole = before.k_extent % kSharedRow == 0 &&
                       !dividing(options_.warpgroups, before.i_extent, 64).empty() &&
                       !dividing(options_.n_tiles, before.j_extent, 1).empty();
    // A whole GEMM whose B is stored [k, n] has its operands reindexed the same way, so the
    // threads' copies lay B out [n, k] in the shared tile (unpipelined, as a padded GEMM's).
    if (!whole || !before.trans_b) {
      const int64_t n_min = *std::min_element(options_.n_tiles.begin(), options_.n_tiles.end());
      const int64_t wg_min = *std::min_element(options_.warpgroups.begin(), options_.warpgroups.end());
      if (!pad_to_tiles(*gemm, block, 64 * wg_min, n_min, kSharedRow, /*copy_operands=*/!before.trans_b)) return {};
    }
    const GemmMatch& match = gemm->match;
    if (!match.trans_b || match.k_extent % kSharedRow != 0) return {};
    std::vector<int64_t> warpgroups = dividing(options_.warpgroups, match.i_extent, 64);
    std::vector<int64_t> n_tiles = dividing(options_.n_tiles, match.j_extent, 1);
    if (warpgroups.empty() || n_tiles.empty()) return {};
    // An output copied back from C'[m, n] is staged through shared memory into C where the
    // copy back folds into that write (stage_output_tile), else C' is stored and copied. A
    // plain GEMM's epilogue stays a kernel of its own: wgmma's swizzled operand tiles keep
    // their memory (share_shared_memory), so a staged f32 tile of 128 x 256 (128 KiB) came
    // on top of a 3-deep pipeline's 144 KiB, past the 227 KiB a block may have, at the f16
    // GEMM expert's decisions.
    gemm->epilogue.reset();
    std::optional<Schedule> s = staged_sketch_or_plain(*gemm, target_, [&](Schedule& t, bool staged) {
      sketch(t, block, *gemm, warpgroups, n_tiles, staged);
    });
    if (!s) return {};
    return {*s, sch};
  }

 private:
  void sketch(Schedule& s, const std::string& name, const TensorCoreGemm& gemm, const std::vector<int64_t>& warpgroups,
              const std::vector<int64_t>& n_tiles, bool stage_output) const {
    const GemmMatch& m = gemm.match;
    const std::optional<ImplicitGemm>& copies = gemm.copies;
    const std::string half = ir::to_string(m.dtype);
    BlockRV c = s.get_block(name);
    s.annotate(c, "meta_schedule.tiling_structure", std::string("wgmma"));
    std::optional<BlockRV> c_shared;
    if (stage_output) c_shared = s.cache_write(c, 0, "shared.dyn");
    BlockRV c_warp = s.cache_write(c, 0, "warp");
    BlockRV a_shared = s.cache_read(c, 0, "shared.dyn", {c});
    BlockRV b_shared = s.cache_read(c, 1, "shared.dyn", {c});
    if (copies) {
      // The shared tiles gather from the operands themselves (no im2col buffer), zero in
      // the padding of a padded GEMM.
      s.compute_inline(copies->a_copy);
      s.compute_inline(copies->b_copy);
    }
    std::vector<LoopRV> loops = s.get_loops(c);
    ExprRV wg = sample_uniform(s, warpgroups);
    ExprRV n = sample_uniform(s, n_tiles);
    // i: [block, warpgroup, 64]; j: [block, N]; k: [shared k step of 64, 4, 16].
    std::vector<LoopRV> i = s.split(loops[m.i], {None{}, wg, int64_t{64}});
    std::vector<LoopRV> j = s.split(loops[m.j], {None{}, n});
    std::vector<LoopRV> k = s.split(loops[m.k], {None{}, kSharedRow / 16, int64_t{16}});
    std::vector<LoopRV> order;
    for (size_t b : m.batch) order.push_back(loops[b]);
    for (LoopRV l : {i[0], j[0], i[1], k[0], k[1], i[2], j[1], k[2]}) order.push_back(l);
    s.reorder(order);
    std::vector<LoopRV> outer;
    for (size_t b : m.batch) outer.push_back(loops[b]);
    outer.push_back(i[0]);
    LoopRV by = outer.size() == 1 ? outer[0] : s.fuse(outer);
    s.bind(by, "blockIdx.y");
    s.bind(j[0], "blockIdx.x");
    s.bind(i[1], "threadIdx.y");
    // The kernel runs warpgroups x 128 threads (the copies bind threadIdx.x).
    s.annotate(c, "meta_schedule.thread_extent_low_inclusive", kWarpgroupLanes);
    s.annotate(c, "meta_schedule.thread_extent_high_inclusive", target_.max_threads_per_block);
    s.reverse_compute_at(c_warp, i[1], true, -1);
    if (c_shared) {
      // The block's threads copy the tile into C one element each per step.
      LoopRV tile = stage_output_tile(s, *c_shared, c_warp, j[0], gemm);
      std::vector<LoopRV> parts = s.split(tile, {None{}, wg, kWarpgroupLanes});
      s.bind(parts[1], "threadIdx.y");
      s.bind(parts[2], "threadIdx.x");
    }
    for (BlockRV shared : {a_shared, b_shared}) {
      s.compute_at(shared, k[0], true, -1);
      std::vector<LoopRV> cl = s.get_loops(shared);
      LoopRV fused = s.fuse({cl[cl.size() - 2], cl[cl.size() - 1]});
      std::vector<LoopRV> parts = s.split(fused, {None{}, wg, kWarpgroupLanes, kCopyVector});
      s.bind(parts[1], "threadIdx.y");
      s.bind(parts[2], "threadIdx.x");
      s.vectorize(parts[3]);
    }
    std::vector<int64_t> stages = options_.pipeline_stages;
    // cp.async copies global memory into shared memory as it is: an implicit GEMM's tiles
    // gather (and compute the padding), as a padded GEMM's compute its zeros, so they are
    // copied by the threads, unpipelined.
    if (!stages.empty() && !copies) {
      s.annotate(k[0], std::string(kSoftwarePipelineDepth), sample_uniform(s, stages));
    }
    // The N of the update's intrinsic is the sampled tile: rewrite_tensorize reads it off
    // the loop (wgmma_family_intrin_name).
    s.annotate(c, kAutoTensorize, wgmma_family_intrin_name(half));
    s.annotate(c_warp, kAutoTensorize, std::string("wgmma_store_m64n8_f32"));
  }

  WgmmaOptions options_;
  lower::Target target_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_multi_level_tiling_wgmma_rule(ParamReader& params, const lower::Target& target) {
  WgmmaOptions options;
  options.warpgroups = params.get_ints("warpgroups", options.warpgroups);
  options.n_tiles = params.get_ints("n_tiles", options.n_tiles);
  options.pipeline_stages = params.get_ints("pipeline_stages", options.pipeline_stages);
  for (int64_t n : options.n_tiles) {
    if (n < schedule::kWgmmaMinN || n > schedule::kWgmmaMaxN || n % schedule::kWgmmaMinN != 0) {
      throw UserError(fmt::format("rule multi_level_tiling_wgmma: n_tiles holds {}; wgmma's N is a multiple of {} "
                                  "from {} to {}",
                                  n, schedule::kWgmmaMinN, schedule::kWgmmaMinN, schedule::kWgmmaMaxN));
    }
  }
  for (int64_t w : options.warpgroups) {
    if (w < 1 || w * kWarpgroupLanes > (target.max_threads_per_block > 0 ? target.max_threads_per_block : 1024)) {
      throw UserError(fmt::format("rule multi_level_tiling_wgmma: warpgroups holds {}; a block holds 1 to {} "
                                  "warpgroups of 128 threads",
                                  w, (target.max_threads_per_block > 0 ? target.max_threads_per_block : 1024) / 128));
    }
  }
  for (int64_t d : options.pipeline_stages) {
    if (d < 1) throw UserError(fmt::format("rule multi_level_tiling_wgmma: pipeline_stages holds {} (at least 1)", d));
  }
  return std::make_unique<MultiLevelTilingWgmma>(std::move(options), target);
}

}  // namespace dragon::search
