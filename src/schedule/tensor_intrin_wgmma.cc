// The built-in tensor intrinsics of Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): the
// f16 and bf16 multiply-accumulate into f32 of a 64 x N x 16 tile with A and B read from
// shared memory (both K-major: A [m, k], B [n, k]), and the fill and store of its
// accumulator in 64 x 8 tiles. Descriptions only, as IR text; the contract (warpgroups,
// the 128-byte swizzled shared layout, the accumulator's lane layout) is in tensor_intrin.h,
// the code in src/codegen/cuda_wgmma.cc.
#include <fmt/format.h>

#include "dragon/ir/parser.h"
#include "dragon/schedule/tensor_intrin.h"
#include "tensor_intrin_parts.h"

namespace dragon::schedule::detail {

namespace {

TensorIntrin wgmma(const std::string& dtype, int n) {
  const std::string name = wgmma_intrin_name(dtype, n);
  const std::string text = fmt::format(R"(func {0}(in A: {1}[64, 16], in B: {1}[{2}, 16], inout C: f32[64, {2}]) {{
  block root {{
    for i in 64 {{
      for j in {2} {{
        for k in 16 {{
          block C [vi: S 64 = i, vj: S {2} = j, vk: R 16 = k] {{
            reads C[vi, vj], A[vi, vk], B[vj, vk]
            writes C[vi, vj]
            C[vi, vj] = C[vi, vj] + f32(A[vi, vk]) * f32(B[vj, vk])
          }}
        }}
      }}
    }}
  }}
}}
)",
                                       name, dtype, n);
  return make_tensor_intrin(name, text, {kSharedScopes, kSharedScopes, kFragmentScopes},
              fmt::format("wgmma.mma_async.sync.aligned.m64n{0}k16.f32.{1}.{1} (A, B by 128B-swizzled "
                          "shared-memory descriptors)",
                          n, dtype));
}

}  // namespace

std::vector<TensorIntrin> builtin_wgmma_intrins() {
  std::vector<TensorIntrin> out;
  for (const std::string dtype : {"f16", "bf16"}) {
    for (int n = kWgmmaMinN; n <= kWgmmaMaxN; n += kWgmmaMinN) out.push_back(wgmma(dtype, n));
  }
  out.push_back(accumulator_fill("wgmma_fill_m64n8_f32", 64,
                                 "four zero moves per lane of the warpgroup into the accumulator registers"));
  out.push_back(accumulator_store("wgmma_store_m64n8_f32", 64,
                                  "four stores per lane of the warpgroup's accumulator registers"));
  return out;
}

}  // namespace dragon::schedule::detail

namespace dragon::schedule {

std::string wgmma_intrin_name(std::string_view dtype, int n) {
  return fmt::format("wgmma_m64n{1}k16_{0}{0}f32_trans_b", dtype, n);
}

}  // namespace dragon::schedule
