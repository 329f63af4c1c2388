// A MetaSchedule MultiLevelTilingTensorCore-style sketch of a matmul (16x8x16 mma tiles,
// shared then fragment caches, fill/ldmatrix/mma/store tensorized), built through the
// Schedule API with fixed decisions. Shared by the schedule's trace test and the CUDA mma
// emitter's tests. Not a search.
#pragma once

#include <cstdint>
#include <string>

#include "dragon/schedule/schedule.h"

namespace dragon::schedule::testing {

// The sketch on `spec`: "matmul:m=128,n=128,k=128,dtype=f16" or dtype=bf16, optionally
// with trans_b=true (B stored [n, k]: the _trans_b mma and ldmatrix intrinsics); the tile
// decisions are fixed for 128^3. Loops it does not bind (the output cast) stay unbound.
// `row_padding` is storage_align's offset for the shared tiles' rows (8: TVM's value; one
// that is not a multiple of 8 halves breaks ldmatrix's 16-byte row alignment).
Schedule tensorcore_gemm_sketch(const std::string& spec, int64_t row_padding = 8);

}  // namespace dragon::schedule::testing
