// Which loops of a block are a GEMM's: C[.., i, j] += f32(A[.., i, k]) * f32(B[.., k, j] or
// B[.., j, k]) with A and B of one type (f16, bf16, or f32 for the tf32 instructions; or
// one f32 and one 16-bit, for the tf32 instructions too) and C in f32, trivial bindings, batch loops outside i, then i, j, k in that order. Shared by the
// tensor-core rules (mma.sync: multi_level_tiling_tensor_core.cc; wgmma, half types only:
// multi_level_tiling_wgmma.cc), each of which adds the tile divisibility and the types its
// instruction needs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dragon/ir/dtype.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"
#include "space/block_analysis.h"

namespace dragon::search {

struct GemmMatch {
  std::vector<size_t> batch;  // loop positions of the other spatial loops
  size_t i = 0, j = 0, k = 0;  // loop positions
  int64_t i_extent = 0, j_extent = 0, k_extent = 0;
  bool trans_b = false;  // B is [.., j, k] (K-major, what wgmma reads) rather than [.., k, j]
  ir::DataType dtype;    // of A and B: f16, bf16, or f32 (the tf32 family, which also takes
                         // one 16-bit operand with an f32 one: a_dtype and b_dtype say which)
  ir::DataType a_dtype, b_dtype;
};

std::optional<GemmMatch> match_gemm(const BlockSite& site);

// Whether the postprocessors (rewrite_reduction_block, then rewrite_tensorize) would
// tensorize every block of the sketch `s` annotated for tensor cores, at its sampled
// decisions: tried on a copy. A sketch that cannot is not offered.
bool tensorizes(const schedule::Schedule& s, const lower::Target& target);

}  // namespace dragon::search
