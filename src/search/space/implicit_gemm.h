// Presenting a convolution-like reduction block as a GEMM (MetaSchedule's implicit GEMM
// for tensor cores): its two inputs and its output are reindexed (schedule reindex), each
// copy and the block are laid out by one fusion map (transform_layout, then
// transform_block_layout on the copies and the block), so the block becomes
// C'[m, n] += A'[m, k] * B'[n, k] with trivial bindings, which match_gemm (gemm_match.h)
// accepts. m fuses the spatial variables only A reads, n those only B reads, k the
// reduction variables (which both read). The input copies are left for the caller to
// inline into the shared-memory reads that replace them (no im2col buffer in global
// memory); the output's copy back stays, a permutation of the output.
#pragma once

#include <optional>
#include <string>

#include "dragon/schedule/schedule.h"
#include "space/gemm_match.h"

namespace dragon::search {

struct ImplicitGemm {
  schedule::BlockRV a_copy;  // the block copying A into A'[m, k]
  schedule::BlockRV b_copy;  // the block copying B into B'[n, k]
  schedule::BlockRV c_back;  // the block copying C'[m, n] back into C
};

// Applies the presentation to `block` of `sch` when the block is a leaf reduction with one
// write and two inputs, each spatial variable read by at most one input (a grouped conv's
// channel, read by both, is refused), each reduction variable read by both, and the
// block's loops its own; nullopt otherwise, `sch` then unchanged. Throws what the
// primitives throw on preconditions this check did not foresee (the rule catches it).
std::optional<ImplicitGemm> present_as_gemm(schedule::Schedule& sch, const std::string& block);

// What a tensor-core rule tiles at `block`: a copy of the schedule, the GEMM its block is
// there, and the presentation when the block was a convolution presented as one. nullopt
// for a block already tiled, under a loop that is not plain serial, or neither a GEMM
// (match_gemm) nor presentable (present_as_gemm, whose unforeseen refusals count as no).
struct TensorCoreGemm {
  schedule::Schedule schedule;
  GemmMatch match;
  std::optional<ImplicitGemm> implicit;
};
std::optional<TensorCoreGemm> tensor_core_gemm(const schedule::Schedule& sch, const std::string& block);

}  // namespace dragon::search
