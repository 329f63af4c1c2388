// The built-in tensor intrinsics of the mma.sync family (sm_80+): the m16n8k16 f16 and
// bf16 multiply-accumulate into f32 and the m16n8k8 tf32 and 3xtf32 ones on f32 operands
// (B as [k, n] or [n, k]), the accumulator fill and store, and the loads of A and B tiles
// into fragments. Descriptions only, as IR text; the contract and the lane layouts are in
// tensor_intrin.h.
#include <fmt/format.h>

#include "dragon/ir/parser.h"
#include "dragon/schedule/tensor_intrin.h"
#include "tensor_intrin_parts.h"
#include "dragon/support/error.h"

namespace dragon::schedule {

namespace {
constexpr std::string_view kTrans = "_trans_b";
bool is_narrow(std::string_view dtype) { return dtype == "bf16" || dtype == "f16"; }
}  // namespace

std::string tf32_mma_intrin_name(int passes, bool trans_b, std::string_view a, std::string_view b) {
  if (passes != 1 && passes != 3) throw UserError(fmt::format("tf32 mma: {} passes; 1 (tf32) or 3 (3xtf32)", passes));
  const std::string_view trans = trans_b ? kTrans : "";
  if (a == "f32" && b == "f32") return fmt::format("mma_m16n8k8_{}f32{}", passes == 1 ? "tf32tf32" : "3xtf32", trans);
  if (!((a == "f32" && is_narrow(b)) || (is_narrow(a) && b == "f32"))) {
    throw UserError(fmt::format("tf32 mma: operands {} and {}; f32 with f32, bf16 or f16", a, b));
  }
  return fmt::format("mma_m16n8k8_{}_{}{}f32{}", passes == 1 ? "tf32" : "3xtf32", a, b, trans);
}

std::optional<Tf32Mma> parse_tf32_mma_intrin_name(std::string_view name) {
  Tf32Mma m;
  std::string_view rest = name;
  if (rest.size() >= kTrans.size() && rest.substr(rest.size() - kTrans.size()) == kTrans) {
    m.trans_b = true;
    rest.remove_suffix(kTrans.size());
  }
  for (int passes : {1, 3}) {
    for (std::string_view a : {"f32", "bf16", "f16"}) {
      for (std::string_view b : {"f32", "bf16", "f16"}) {
        std::string candidate;
        try {
          candidate = tf32_mma_intrin_name(passes, false, a, b);
        } catch (const UserError&) {
          continue;
        }
        if (candidate == rest) return Tf32Mma{passes, m.trans_b, std::string(a), std::string(b)};
      }
    }
  }
  return std::nullopt;
}

namespace detail {

namespace {

// The description of C[16, 8] += A[16, k] * B[k, 8] (B stored [8, k] when `trans_b`) with
// `a_dtype` and `b_dtype` operands widened to the f32 accumulator.
std::string mma_m16n8_description(const std::string& name, const std::string& a_dtype, const std::string& b_dtype,
                                  int k, bool trans_b) {
  const std::string b_shape = trans_b ? fmt::format("[8, {}]", k) : fmt::format("[{}, 8]", k);
  const std::string b_index = trans_b ? "vj, vk" : "vk, vj";
  // 16-bit operands are widened to the accumulator; f32 ones need no cast.
  auto widened = [](const std::string& dtype, const std::string& access) {
    return dtype == "f32" ? access : "f32(" + access + ")";
  };
  return fmt::format(R"(func {0}(in A: {1}[16, {2}], in B: {7}{3}, inout C: f32[16, 8]) {{
  block root {{
    for i in 16 {{
      for j in 8 {{
        for k in {2} {{
          block C [vi: S 16 = i, vj: S 8 = j, vk: R {2} = k] {{
            reads C[vi, vj], A[vi, vk], B[{4}]
            writes C[vi, vj]
            C[vi, vj] = C[vi, vj] + {5} * {6}
          }}
        }}
      }}
    }}
  }}
}}
)",
                     name, a_dtype, k, b_shape, b_index, widened(a_dtype, "A[vi, vk]"),
                     widened(b_dtype, "B[" + b_index + "]"), b_dtype);
}

TensorIntrin mma(const std::string& dtype, bool trans_b) {
  const std::string name = fmt::format("mma_m16n8k16_{0}{0}f32{1}", dtype, trans_b ? "_trans_b" : "");
  return make_tensor_intrin(name, mma_m16n8_description(name, dtype, dtype, 16, trans_b),
                            {kFragmentScopes, kFragmentScopes, kFragmentScopes},
                            fmt::format("mma.sync.aligned.m16n8k16.row.col.f32.{0}.{0}.f32", dtype));
}

// C[16,8] += A[16,8] * B[8,8] on f32 operands through TF32 tensor cores. The description
// is the exact f32 multiply-add (what the interpreter runs); the instruction rounds the
// operands to TF32 (10-bit mantissa) first, once (passes 1) or split into a big and a
// small TF32 part whose three cross products keep about f32 accuracy (passes 3).
// A 16-bit operand (bf16, f16) is exact in TF32 and is widened, not rounded.
TensorIntrin mma_tf32(int passes, bool trans_b, const std::string& a, const std::string& b) {
  const std::string name = tf32_mma_intrin_name(passes, trans_b, a, b);
  const std::string text = mma_m16n8_description(name, a, b, 8, trans_b);
  const std::string instr = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
  std::string summary =
      passes == 1 ? fmt::format("{} after cvt.rna.tf32.f32 of A and B: TF32 rounds the operands to a 10-bit mantissa, "
                                "so the result differs from this f32 description by about 1e-3 relative",
                                instr)
                  : fmt::format("three {} (a_big*b_small + a_small*b_big + a_big*b_big, big = cvt.rna.tf32.f32(x), "
                                "small = cvt.rna.tf32.f32(x - big)): TF32 rounds the operands; the split keeps about "
                                "f32 accuracy",
                                instr);
  return make_tensor_intrin(name, text, {kFragmentScopes, kFragmentScopes, kFragmentScopes}, std::move(summary));
}

// A fragment load: `rows` x `cols` elements of `dtype` from shared memory into "warp".
TensorIntrin fragment_load(const std::string& name, const std::string& dtype, int rows, int cols, const char* row_var,
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
  return make_tensor_intrin(name, text, {kSharedScopes, kFragmentScopes}, std::move(summary));
}

// A fragment load that transposes: the `rows` x `cols` fragment F[r, c] from a tile stored
// the other way round, S[c, r]. An operand whose global memory runs along m or n rather
// than k (a convolution's NCHW input, a transposed A, a [k, n] B copied for padding) is
// staged in shared memory [k, m] or [k, n], so that the threads filling the tile walk
// memory contiguously and store whole shared rows; the fragment is the one the mma reads
// either way.
TensorIntrin transposing_fragment_load(const std::string& name, const std::string& dtype, int rows, int cols,
                                       std::string summary) {
  const std::string text = fmt::format(R"(func {0}(in S: {1}[{3}, {2}], out F: {1}[{2}, {3}]) {{
  block root {{
    for r in {2} {{
      for c in {3} {{
        block F [vi: S {2} = r, vk: S {3} = c] {{
          reads S[vk, vi]
          writes F[vi, vk]
          F[vi, vk] = S[vk, vi]
        }}
      }}
    }}
  }}
}}
)",
                                       name, dtype, rows, cols);
  return make_tensor_intrin(name, text, {kSharedScopes, kFragmentScopes}, std::move(summary));
}

}  // namespace

std::vector<TensorIntrin> builtin_mma_intrins() {
  std::vector<TensorIntrin> out;
  for (const std::string dtype : {"f16", "bf16"}) {
    out.push_back(mma(dtype, false));
    out.push_back(mma(dtype, true));
    out.push_back(fragment_load("mma_ldmatrix_a_m16k16_" + dtype, dtype, 16, 16, "vi", "vk",
                           "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    out.push_back(fragment_load("mma_ldmatrix_b_k16n8_" + dtype, dtype, 16, 8, "vk", "vj",
                           "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"));
    out.push_back(fragment_load("mma_ldmatrix_b_trans_n8k16_" + dtype, dtype, 8, 16, "vj", "vk",
                           "ldmatrix.sync.aligned.m8n8.x2.shared.b16"));
    out.push_back(transposing_fragment_load("mma_ldmatrix_a_m16k16_from_k16m16_" + dtype, dtype, 16, 16,
                                            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 of A stored [k, m]"));
    out.push_back(transposing_fragment_load("mma_ldmatrix_b_n8k16_from_k16n8_" + dtype, dtype, 8, 16,
                                            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 of B stored [k, n] into "
                                            "the [n, k] fragment a _trans_b mma reads"));
  }
  for (int passes : {1, 3}) {
    for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
             {"f32", "f32"}, {"f32", "bf16"}, {"f32", "f16"}, {"bf16", "f32"}, {"f16", "f32"}}) {
      out.push_back(mma_tf32(passes, false, a, b));
      out.push_back(mma_tf32(passes, true, a, b));
    }
  }
  // 16-bit operands of the tf32 mma: the same fragment positions, one element per slot.
  for (const std::string dtype : {"bf16", "f16"}) {
    out.push_back(fragment_load("mma_load_a_m16k8_" + dtype, dtype, 16, 8, "vi", "vk",
                                "per-lane 2-byte loads of a0..a3, widened to TF32 in the mma"));
    out.push_back(fragment_load("mma_load_b_k8n8_" + dtype, dtype, 8, 8, "vk", "vj",
                                "per-lane 2-byte loads of b0, b1, widened to TF32 in the mma"));
    out.push_back(fragment_load("mma_load_b_trans_n8k8_" + dtype, dtype, 8, 8, "vj", "vk",
                                "per-lane 2-byte loads of b0, b1 of B stored [n, k], widened to TF32 in the mma"));
    out.push_back(transposing_fragment_load("mma_load_a_m16k8_from_k8m16_" + dtype, dtype, 16, 8,
                                            "per-lane 2-byte loads of a0..a3 of A stored [k, m], widened to TF32 in "
                                            "the mma"));
    out.push_back(transposing_fragment_load("mma_load_b_n8k8_from_k8n8_" + dtype, dtype, 8, 8,
                                            "per-lane 2-byte loads of b0, b1 of B stored [k, n] into the [n, k] "
                                            "fragment a _trans_b mma reads, widened to TF32 in the mma"));
  }
  out.push_back(fragment_load("mma_load_a_m16k8_f32", "f32", 16, 8, "vi", "vk",
                              "ldmatrix.sync.aligned.m8n8.x4.shared.b16 of four 8x4 word tiles where shared rows "
                              "are 16-byte aligned, else per-lane 4-byte loads of a0..a3"));
  out.push_back(fragment_load("mma_load_b_k8n8_f32", "f32", 8, 8, "vk", "vj",
                              "per-lane 4-byte loads of b0, b1 (ldmatrix .trans moves 16-bit elements, not words)"));
  out.push_back(transposing_fragment_load("mma_load_a_m16k8_from_k8m16_f32", "f32", 16, 8,
                                          "per-lane 4-byte loads of a0..a3 of A stored [k, m] (ldmatrix .trans moves "
                                          "16-bit elements, not words)"));
  out.push_back(transposing_fragment_load("mma_load_b_n8k8_from_k8n8_f32", "f32", 8, 8,
                                          "per-lane 4-byte loads of b0, b1 of B stored [k, n] into the [n, k] "
                                          "fragment a _trans_b mma reads"));
  out.push_back(fragment_load("mma_load_b_trans_n8k8_f32", "f32", 8, 8, "vj", "vk",
                              "ldmatrix.sync.aligned.m8n8.x2.shared.b16 of two 8x4 word tiles of B stored [n, k] "
                              "where rows are 16-byte aligned, else per-lane 4-byte loads of b0, b1"));
  out.push_back(accumulator_fill("mma_fill_m16n8_f32", 16,
                                 "four zero moves per lane into the accumulator registers"));
  out.push_back(accumulator_store("mma_store_m16n8_f32", 16,
                                  "two 8-byte stores per lane of the accumulator registers"));
  return out;
}

}  // namespace detail
}  // namespace dragon::schedule
