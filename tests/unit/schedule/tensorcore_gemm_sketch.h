// A MetaSchedule MultiLevelTilingTensorCore-style sketch of a matmul (16x8x16 mma tiles,
// shared then fragment caches, fill/ldmatrix/mma/store tensorized), built through the
// Schedule API with fixed decisions. Shared by the schedule's trace test and the CUDA mma
// emitter's tests. Not a search.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/schedule/schedule.h"

namespace dragon::schedule::testing {

// The sketch on `spec`: "matmul:m=128,n=128,k=128,dtype=f16" or dtype=bf16, optionally
// with trans_b=true (B stored [n, k]: the _trans_b mma and ldmatrix intrinsics); the tile
// decisions are fixed for 128^3. Loops it does not bind (the output cast) stay unbound.
// `row_padding` is storage_align's offset for the shared tiles' rows (8: TVM's value; one
// that is not a multiple of 8 halves breaks ldmatrix's 16-byte row alignment).
Schedule tensorcore_gemm_sketch(const std::string& spec, int64_t row_padding = 8);

// The sketch's sampled decisions: the perfect tiles of the 16-row, 8-column and 16-deep
// mma tile counts (i, j: [blockIdx.y, blockIdx.x, threadIdx.y, outer, inner]; k: [shared
// stage, fragment stage, inner]), the cooperative-fetch vector indexes of A and B into
// {1, 2, 4, 8} and the explicit-unroll index into {0, 16, 64, 512, 1024}. The defaults
// are the 128^3 decisions of the overload above.
struct TensorCoreDecisions {
  std::vector<int64_t> i{2, 1, 2, 2, 1};
  std::vector<int64_t> j{2, 2, 2, 1, 2};
  std::vector<int64_t> k{2, 2, 2};
  int64_t fetch_a = 3, fetch_b = 2;
  int64_t unroll = 3;
};
Schedule tensorcore_gemm_sketch(const std::string& spec, int64_t row_padding, const TensorCoreDecisions& decisions);

}  // namespace dragon::schedule::testing
