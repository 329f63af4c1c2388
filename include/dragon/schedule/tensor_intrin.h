// The registry of named tensor intrinsics that Schedule::tensorize matches blocks against:
// each is a small description PrimFunc (what one warp-wide instruction computes on a
// tile) plus the storage scopes its operands may live in. Not an implementation: nothing
// here emits code; the CUDA emitter owns that.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::schedule {

// The annotation tensorize puts on the outer block of a matched tile; its value is the
// intrinsic's name.
inline constexpr std::string_view kTensorIntrinAnnotation = "tensor_intrin";

// The lanes that execute the intrinsic `name` together, and share its "warp" fragments:
// a warpgroup's 128 for the wgmma family, a warp's 32 for every other.
inline int64_t tensor_intrin_lanes(std::string_view name) { return name.starts_with("wgmma_") ? 128 : 32; }

// ---- The contract of a tensorized block ---------------------------------------------
// Tensorize never rewrites the computation. An outer block annotated
// tensor_intrin = <name> still holds its loops and its inner block, whose body computes
// exactly what the intrinsic's description computes on one tile; the interpreter runs it
// as written, so it stays the reference. The CUDA emitter replaces the whole outer block
// by the intrinsic, executed by the 32 lanes of one warp together, or by the 128 lanes of
// a warpgroup for the wgmma family below (all lanes must reach it: the outer block may not
// sit under a threadIdx.x loop that splits a warp or warpgroup).
//
// Tile coordinates: the inner block's iteration variables that vary inside the tile
// (tile extent > 1) are, in order, the description's iteration variables; each index of
// an access is (tile offset) + (the description's index in tile coordinates), where the
// offset depends only on the outer block's variables. Dimensions whose index does not
// vary in the tile (a batch) are fixed by the offset. So every operand is a dense,
// unit-stride tile of its buffer in the description's layout, starting at the offset the
// outer block's read/write regions give.
//
// Fragment buffers (scope "warp") hold a tile logically, indexed like the description
// ([row, col] of the operand's layout); physically each lane keeps the elements PTX's
// mma.m16n8k16 layout assigns it. With g = lane / 4 and t = lane % 4:
//   A (16x16, m x k, f16/bf16), 8 elements per lane:
//     a0,a1: (g,     2t + {0,1})    a2,a3: (g + 8, 2t + {0,1})
//     a4,a5: (g, 2t + 8 + {0,1})    a6,a7: (g + 8, 2t + 8 + {0,1})
//   B (16x8, k x n, f16/bf16), 4 elements per lane:
//     b0,b1: (2t + {0,1}, g)        b2,b3: (2t + 8 + {0,1}, g)
//     (a B fragment in [n, k] layout holds the same elements at (g, 2t + ...))
//   C (16x8, m x n, f32), 4 elements per lane:
//     c0,c1: (g, 2t + {0,1})        c2,c3: (g + 8, 2t + {0,1})
// The emitter therefore needs every access to a fragment buffer to be inside a tensorized
// block (a plain block would see the lane layout, not the logical tile); tensorize does
// not check that, the emitter must refuse functions that break it.
//
// Numerics: the mma's k-sum of one tile runs in f32 in an order the hardware chooses, so
// GPU results equal the interpreter's within an f32 reassociation tolerance, not bit for
// bit; the interpreter's sequential order stays the reference.
//
// ---- The registered intrinsics (sm_80+; names are ours) -----------------------------
//   mma_m16n8k16_f16f16f32          C[16,8] += f32(A[16,16]) * f32(B[16,8])   mma.sync.aligned
//   mma_m16n8k16_f16f16f32_trans_b  C[16,8] += f32(A[16,16]) * f32(B[8,16]^T)   .m16n8k16.row.col
//   mma_m16n8k16_bf16bf16f32        the same with bf16 A and B                  .f32.{f16,bf16}
//   mma_m16n8k16_bf16bf16f32_trans_b                                            .{f16,bf16}.f32
//       A, B, C in "warp"; body C[i, j] = C[i, j] + f32(A[i, k]) * f32(B[k, j]) over
//       i: S 16, j: S 8, k: R 16 (B[j, k] for _trans_b); no init (decompose the
//       reduction first and tensorize its init with the fill).
//   mma_fill_m16n8_f32              C[16,8] = 0 in "warp" (i: S 16, j: S 8): the
//       accumulator's initialization, four register moves per lane.
//   mma_store_m16n8_f32             D[16,8] = C[16,8]: the accumulator tile from "warp" to
//       f32 "shared", "shared.dyn" or "global" (i: S 16, j: S 8), two 8-byte stores per lane.
//   mma_ldmatrix_a_m16k16_{f16,bf16}  A_warp[16,16] = A[16,16] from "shared"/"shared.dyn"
//       (i: S 16, k: S 16): ldmatrix.sync.aligned.m8n8.x4.shared.b16.
//   mma_ldmatrix_b_k16n8_{f16,bf16}   B_warp[16,8] = B[16,8], B stored [k, n]
//       (k: S 16, j: S 8): ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16.
//   mma_ldmatrix_b_trans_n8k16_{f16,bf16}  B_warp[8,16] = B[8,16], B stored [n, k]
//       (j: S 8, k: S 16): ldmatrix.sync.aligned.m8n8.x2.shared.b16 (no .trans).
//   mma_ldmatrix_a_m16k16_from_k16m16_{f16,bf16}  A_warp[i, k] = A[k, i], A stored [k, m]
//       (i: S 16, k: S 16): ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16; the fragment
//       the mma reads is the same as mma_ldmatrix_a_m16k16's. For an A whose global memory
//       runs along m (an NCHW convolution's input, a transposed A), staged [k, m].
//   mma_ldmatrix_b_n8k16_from_k16n8_{f16,bf16}  B_warp[j, k] = B[k, j], B stored [k, n]
//       (j: S 8, k: S 16): ldmatrix .x2.trans into the [n, k] fragment of a _trans_b mma
//       (the registers of mma_ldmatrix_b_k16n8): a copied B whose memory runs along n.
// Shared-memory tiles read by ldmatrix need 16-byte aligned rows; that is the emitter's
// (and storage_align's) concern, not the matcher's.
//
// The tf32 family (f32 operands; PTX's m16n8k8 .tf32 fragments, 32-bit elements):
//   mma_m16n8k8_tf32tf32f32[_trans_b]  C[16,8] += A[16,8] * B[8,8] (B[j, k] for _trans_b),
//       i: S 16, j: S 8, k: R 8, all f32 in "warp": mma.sync.aligned.m16n8k8.row.col
//       .f32.tf32.tf32.f32 after cvt.rna.tf32.f32 of each operand.
//   mma_m16n8k8_3xtf32f32[_trans_b]    the same description; each operand split as
//       big = tf32(x), small = tf32(x - big), C += a_big*b_small + a_small*b_big +
//       a_big*b_big: three mma, about f32 accuracy.
//   The descriptions are the exact f32 multiply-add (the interpreter's reference); TF32
//   rounds operands to a 10-bit mantissa, so the single-pass GPU result differs from it by
//   about 1e-3 relative, the 3xtf32 one by about f32 rounding. The accumulator is the
//   m16n8 f32 one above (mma_fill_m16n8_f32, mma_store_m16n8_f32). Fragments, with g and t
//   as above:
//     A (16x8, m x k), 4 elements per lane: a0: (g, t)  a1: (g + 8, t)  a2: (g, t + 4)
//                                           a3: (g + 8, t + 4)
//     B (8x8, k x n), 2 elements per lane:  b0: (t, g)  b1: (t + 4, g)
//       (a B fragment in [n, k] layout holds the same elements at (g, t), (g, t + 4))
//   mma_load_a_m16k8_from_k8m16_{f32,bf16,f16}: A_warp[i, k] = A[k, i] from A stored [k, m]
//       (i: S 16, k: S 8), per-lane loads of a0..a3 (ldmatrix .trans moves 16-bit elements).
//   mma_load_b_n8k8_from_k8n8_{f32,bf16,f16}: B_warp[j, k] = B[k, j] from B stored [k, n]
//       (j: S 8, k: S 8) into a _trans_b mma's fragment, per-lane loads of b0, b1.
//   mma_load_a_m16k8_f32, mma_load_b_k8n8_f32, mma_load_b_trans_n8k8_f32: the f32 tiles
//       from "shared"/"shared.dyn" into those fragments: ldmatrix .b16 read as 8x4 tiles
//       of 32-bit words (lane l gets word l % 4 of row l / 4, which is (g, t)) for A and an
//       [n, k] B where the rows are 16-byte aligned, per-lane 4-byte loads otherwise and
//       for a [k, n] B.
//
// ---- The warpgroup family (Hopper, sm_90a; names are ours) ---------------------------
// One wgmma instruction is issued by a warpgroup: 4 consecutive warps, 128 threads. A
// kernel with wgmma blocks runs in warpgroup mode: threadIdx.x = the 128 lanes of a
// warpgroup (implied by the blocks, as the 32 lanes are for mma.sync; cooperative code may
// bind threadIdx.x with extent 128), whole warpgroups along threadIdx.y/z. The mma.sync
// and wgmma families do not mix in one kernel.
//   wgmma_m64n{N}k16_{f16f16,bf16bf16}f32_trans_b, N = 8, 16, ..., 256:
//       C[64,N] += f32(A[64,16]) * f32(B[N,16]^T), i: S 64, j: S N, k: R 16;
//       A and B in "shared"/"shared.dyn", both K-major (k the contiguous index), C in
//       "warp"; no init (tensorize the decomposed init with the fill).
//   wgmma_fill_m64n8_f32   C[64,8] = 0 in "warp".
//   wgmma_store_m64n8_f32  D[64,8] = C[64,8], "warp" to f32 "shared"/"shared.dyn"/"global".
// Accumulator fragments of this family are 64x8 tiles over the 128 lanes, 4 elements a
// lane; with w = lane / 32, g = (lane % 32) / 4, t = lane % 4:
//     c0,c1: (16w + g, 2t + {0,1})    c2,c3: (16w + g + 8, 2t + {0,1})
// and a 64xN accumulator is its N/8 column tiles in order, which is PTX's wgmma D
// fragment (register 4q + r of column tile q).
// Shared operands: the IR indexes A and B logically (the interpreter's values), the
// emitter chooses their physical layout: each shared buffer a wgmma reads must have rows
// of exactly 64 two-byte elements (128 bytes: one swizzle row; BK = 64), a whole number
// of 8-row (1024-byte) atoms, and is stored with the 128-byte swizzle (the 16-byte chunk
// c of row r at chunk c ^ (r % 8), codegen::swizzle128_b16) by every access the kernel
// makes to it (copies, vector copies, cp.async), so the copy into shared memory writes
// the layout the wgmma's descriptors describe. The tile a wgmma reads starts on an 8-row
// boundary and on a 16-element column. Numerics as for mma.sync.

struct TensorIntrin {
  std::string name;
  // What the instruction computes, as a PrimFunc whose root block holds a chain of loops
  // down to one block bound to exactly those loops (iteration domains from 0).
  ir::PrimFunc desc;
  // For each parameter of `desc`, in order: the storage scopes the matched buffer may
  // have ("warp", "shared", ...).
  std::vector<std::vector<std::string>> scopes;
  // One line: the instruction the emitter is expected to produce.
  std::string summary;

  // The block of `desc` the matched inner block is compared with.
  const ir::BlockRealizeNode* desc_realize() const;
};

// The intrinsic named `name`, or nullptr.
const TensorIntrin* find_tensor_intrin(std::string_view name);
// Every registered name, sorted.
std::vector<std::string> tensor_intrin_names();
// Adds an intrinsic (tests and later targets); the built-in mma and wgmma families are
// registered on first use. Throws UserError when the name is taken or the description is not a root
// block over a loop chain down to one block bound to those loops, or the scopes do not
// list one non-empty set per parameter.
void register_tensor_intrin(TensorIntrin intrin);

// The wgmma family's N: multiples of 8 from 8 to 256.
inline constexpr int kWgmmaMinN = 8;
inline constexpr int kWgmmaMaxN = 256;
// The name of the wgmma m64nNk16 intrinsic for `dtype` "f16" or "bf16":
// wgmma_m64n{N}k16_{dtype}{dtype}f32_trans_b.
std::string wgmma_intrin_name(std::string_view dtype, int n);

// The name of the tf32 mma: passes 1 -> mma_m16n8k8_tf32tf32f32, passes 3 (3xTF32) ->
// mma_m16n8k8_3xtf32f32, with _trans_b for B stored [n, k]. UserError for other passes.
// With a 16-bit operand ("bf16" or "f16", the other "f32"), widened exactly to TF32:
// mma_m16n8k8_tf32_{a}{b}f32 and mma_m16n8k8_3xtf32_{a}{b}f32 (an f32 activation times
// bf16 weights, DLRM-Bench's DCN layer); UserError for other types.
std::string tf32_mma_intrin_name(int passes, bool trans_b, std::string_view a = "f32", std::string_view b = "f32");
// What tf32_mma_intrin_name made `name` from, or nullopt for another name.
struct Tf32Mma {
  int passes = 1;
  bool trans_b = false;
  std::string a = "f32", b = "f32";
};
std::optional<Tf32Mma> parse_tf32_mma_intrin_name(std::string_view name);

namespace detail {
// The built-in mma.m16n8k16 family (tensor_intrin_mma.cc).
std::vector<TensorIntrin> builtin_mma_intrins();
// The built-in wgmma family (tensor_intrin_wgmma.cc).
std::vector<TensorIntrin> builtin_wgmma_intrins();
}  // namespace detail

}  // namespace dragon::schedule
