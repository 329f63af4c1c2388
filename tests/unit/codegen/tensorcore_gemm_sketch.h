// The tensor-core GEMM sketch of tests/unit/schedule/test_gemm_tensorcore_trace.cc (16x8x16
// mma tiles, shared then fragment caches, fill/ldmatrix/mma/store tensorized) with AutoBind
// on what it leaves unbound, for the CUDA mma emitter's tests. Not a search: decisions are fixed.
#pragma once

#include <string>

#include "dragon/schedule/schedule.h"

namespace dragon::codegen::testing {

// The sketch on `spec`: "matmul:m=128,n=128,k=128,dtype=f16" or dtype=bf16, optionally
// with trans_b=true (B stored [n, k]: the _trans_b mma and ldmatrix intrinsics); the tile
// decisions are fixed for that shape.
// `row_padding` is storage_align's offset for the shared tiles' rows (8: TVM's value; one
// that is not a multiple of 8 halves breaks ldmatrix's 16-byte row alignment).
schedule::Schedule tensorcore_gemm_sketch(const std::string& spec, int64_t row_padding = 8);

}  // namespace dragon::codegen::testing
