// The untuned default schedule of a GEMM or a convolution on tensor cores: the
// multi_level_tiling_tensor_core sketch of the function's design space with decisions
// chosen by a rule of thumb instead of drawn, so that a workload nobody tuned (a held-out
// GEMM, a model's layer) runs on mma.sync with reasonable tiles rather than on CUDA-core
// FMAs at a tenth of eager's speed. The rule of thumb is the shape hand-written kernels
// take: warp tiles near 64 x 64, four warps a block, 32 elements of K a stage in three
// pipelined stages, 128-bit cooperative fetches, exact 3xTF32 for f32 (one-pass TF32 fails
// the harness's f32 check on plain GEMMs, and a default must pass every check), and grids
// that fill the GPU. Search still decides everything for a tuned kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"

namespace dragon::search {

// The perfect tiles of one tensor-core tiling (the rule's SSSRRSRS: i and j in five pieces
// each, blockIdx.y / blockIdx.x / warps / serial / innermost; k in three, the stage loop
// outermost), in units of mma tiles (16 rows of i, 8 columns of j, one instruction's k).
struct TensorCoreTiles {
  std::vector<int64_t> i, j, k;
};

// Tilings of an `i_tiles` x `j_tiles` x `k_tiles` GEMM (in mma tiles) best first by the
// rule of thumb above: each piece a divisor of what is left, the innermost at most
// `max_innermost`, a lane's accumulators at most 128 floats, at most 8 warps, the stage
// `k_tiles_per_stage` mma k-steps deep where a divisor allows, blocks enough for two
// waves of `multiprocessors` where the shape allows (0: not weighed). At most `limit` of them.
std::vector<TensorCoreTiles> ranked_tensor_core_tiles(int64_t i_tiles, int64_t j_tiles, int64_t k_tiles,
                                                      int64_t k_tiles_per_stage, int64_t max_innermost,
                                                      int64_t multiprocessors, size_t limit);

// `func` scheduled by the first tensor-core sketch of its design space (RuleSet::cuda, in
// the space's order: a split-K sketch may follow the plain one) under the first of the
// ranked tilings that replays and passes the postprocessors (GPU limits included); nullopt
// when the target is not a GPU, when no block is a GEMM or a convolution the tensor-core
// rule takes, or when no such sketch tiles that block alone and fits.
// A GEMM of more than `max_k_steps` mma k-steps (K / 8 for tf32, K / 16 for f16 and bf16,
// K padded to them) is left alone: a lane adds one partial sum of its tile per k-step, in
// order, and the default's other reductions keep at most that many serial adds in one
// thread (DefaultScheduleOptions::max_terms_per_thread).
std::optional<schedule::Schedule> tensor_core_default(const ir::PrimFunc& func, const lower::Target& target,
                                                      int64_t max_k_steps);

}  // namespace dragon::search
