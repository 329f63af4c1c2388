// A Hopper GEMM through the wgmma intrinsics (tensor_intrin.h's warpgroup family), built
// through the Schedule API with fixed tiles: per thread block BM = 64 * warpgroups rows
// and BN = n_tile columns, each warpgroup one 64 x n_tile accumulator in registers; A and
// B (stored [n, k]: trans_b) copied per k step of 64 into shared tiles of rows of 64
// halves (the 128-byte swizzled K-major layout the emitter gives them), each thread moving
// 8 halves at a time; the update tensorized as 64 x n_tile x 16 wgmma, its init and its
// store as 64 x 8 tiles. Shared by the CUDA emitter's tests, the GPU test and the
// wgmma expert scripts (whose trace it is). Not a search.
#pragma once

#include <cstdint>
#include <string>

#include "dragon/schedule/schedule.h"

namespace dragon::schedule::testing {

struct WgmmaGemmTiles {
  int64_t warpgroups = 2;  // along M, bound to threadIdx.y
  int64_t n_tile = 128;    // the wgmma's N (a multiple of 8 up to 256)
  // > 1: the k-step loop software-pipelined this many stages deep (its copies cp.async,
  // stage 0; the wgmma loop stage stages - 1); 0 or 1: not pipelined.
  int64_t stages = 0;
};

// The sketch on `spec`: "matmul:m=M,n=N,k=K,trans_b=true,dtype=f16" (or bf16), with M a
// multiple of 64 * warpgroups, N of n_tile, K of 64. With `bind_cast`, the output cast
// is bound by AutoBind (as an expert script needs); otherwise it stays unbound.
Schedule wgmma_gemm_sketch(const std::string& spec, const WgmmaGemmTiles& tiles = {}, bool bind_cast = false);

}  // namespace dragon::schedule::testing
