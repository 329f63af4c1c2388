// The built-in tensor intrinsics of the mma.sync.m16n8k16 family (sm_80+): the f16 and
// bf16 multiply-accumulate into f32 (B as [k, n] or [n, k]), the accumulator fill and
// store, and the ldmatrix loads of A and B tiles into fragments. Descriptions only, as IR
// text; the contract and the lane layouts are in tensor_intrin.h.
#include <fmt/format.h>

#include "dragon/ir/parser.h"
#include "dragon/schedule/tensor_intrin.h"

namespace dragon::schedule::detail {

namespace {

const std::vector<std::string> kFragment = {"warp"};
const std::vector<std::string> kSharedOnly = {"shared", "shared.dyn"};
const std::vector<std::string> kStoreTarget = {"shared", "shared.dyn", "global"};

TensorIntrin make(std::string name, const std::string& text, std::vector<std::vector<std::string>> scopes,
                  std::string summary) {
  return TensorIntrin{name, ir::parse_function(text, "<intrinsic " + name + ">"), std::move(scopes),
                      std::move(summary)};
}

TensorIntrin mma(const std::string& dtype, bool trans_b) {
  const std::string b_shape = trans_b ? "[8, 16]" : "[16, 8]";
  const std::string b_index = trans_b ? "vj, vk" : "vk, vj";
  const std::string name = fmt::format("mma_m16n8k16_{0}{0}f32{1}", dtype, trans_b ? "_trans_b" : "");
  const std::string text = fmt::format(R"(func {0}(in A: {1}[16, 16], in B: {1}{2}, inout C: f32[16, 8]) {{
  block root {{
    for i in 16 {{
      for j in 8 {{
        for k in 16 {{
          block C [vi: S 16 = i, vj: S 8 = j, vk: R 16 = k] {{
            reads C[vi, vj], A[vi, vk], B[{3}]
            writes C[vi, vj]
            C[vi, vj] = C[vi, vj] + f32(A[vi, vk]) * f32(B[{3}])
          }}
        }}
      }}
    }}
  }}
}}
)",
                                       name, dtype, b_shape, b_index);
  return make(name, text, {kFragment, kFragment, kFragment},
              fmt::format("mma.sync.aligned.m16n8k16.row.col.f32.{0}.{0}.f32", dtype));
}

TensorIntrin fill() {
  return make("mma_fill_m16n8_f32", R"(func mma_fill_m16n8_f32(out C: f32[16, 8]) {
  block root {
    for i in 16 {
      for j in 8 {
        block C [vi: S 16 = i, vj: S 8 = j] {
          writes C[vi, vj]
          C[vi, vj] = 0f32
        }
      }
    }
  }
}
)",
              {kFragment}, "four zero moves per lane into the accumulator registers");
}

TensorIntrin store() {
  return make("mma_store_m16n8_f32", R"(func mma_store_m16n8_f32(in C: f32[16, 8], out D: f32[16, 8]) {
  block root {
    for i in 16 {
      for j in 8 {
        block D [vi: S 16 = i, vj: S 8 = j] {
          reads C[vi, vj]
          writes D[vi, vj]
          D[vi, vj] = C[vi, vj]
        }
      }
    }
  }
}
)",
              {kFragment, kStoreTarget}, "two 8-byte stores per lane of the accumulator registers");
}

// A fragment load: `rows` x `cols` elements of `dtype` from shared memory into "warp".
TensorIntrin ldmatrix(const std::string& name, const std::string& dtype, int rows, int cols, const char* row_var,
                      const char* col_var, std::string summary) {
  const std::string text = fmt::format(R"(func {0}(in S: {1}[{2}, {3}], out F: {1}[{2}, {3}]) {{
  block root {{
    for r in {2} {{
      for c in {3} {{
        block F [{4}: S {2} = r, {5}: S {3} = c] {{
          reads S[{4}, {5}]
          writes F[{4}, {5}]
          F[{4}, {5}] = S[{4}, {5}]
        }}
      }}
    }}
  }}
}}
)",
                                       name, dtype, rows, cols, row_var, col_var);
  return make(name, text, {kSharedOnly, kFragment}, std::move(summary));
}

}  // namespace

std::vector<TensorIntrin> builtin_mma_intrins() {
  std::vector<TensorIntrin> out;
  for (const std::string dtype : {"f16", "bf16"}) {
    out.push_back(mma(dtype, false));
    out.push_back(mma(dtype, true));
    out.push_back(ldmatrix("mma_ldmatrix_a_m16k16_" + dtype, dtype, 16, 16, "vi", "vk",
                           "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    out.push_back(ldmatrix("mma_ldmatrix_b_k16n8_" + dtype, dtype, 16, 8, "vk", "vj",
                           "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"));
    out.push_back(ldmatrix("mma_ldmatrix_b_trans_n8k16_" + dtype, dtype, 8, 16, "vj", "vk",
                           "ldmatrix.sync.aligned.m8n8.x2.shared.b16"));
  }
  out.push_back(fill());
  out.push_back(store());
  return out;
}

}  // namespace dragon::schedule::detail
