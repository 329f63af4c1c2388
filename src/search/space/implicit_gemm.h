// Presenting a convolution-like reduction block as a GEMM (MetaSchedule's implicit GEMM
// for tensor cores): its two inputs and its output are reindexed (schedule reindex), each
// copy and the block are laid out by one fusion map (transform_layout, then
// transform_block_layout on the copies and the block), so the block becomes
// C'[m, n] += A'[m, k] * B'[n, k] with trivial bindings, which match_gemm (gemm_match.h)
// accepts. m fuses the spatial variables only A reads, n those only B reads, k the
// reduction variables (which both read). Spatial variables both inputs and the output read
// are a batch, fused in front of each (C'[b, m, n] += A'[b, m, k] * B'[b, n, k]): the chunk
// of a split-K GEMM's partial sums (add_rfactor's C_rf[chunk, i, j], whose A and B read
// chunk * K' + k), so that a long-K GEMM runs on tensor cores too. The input copies are left for the caller to
// inline into the shared-memory reads that replace them (no im2col buffer in global
// memory); the output's copy back stays, a permutation of the output.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "dragon/schedule/schedule.h"
#include "space/gemm_match.h"

namespace dragon::search {

// The order in which k fuses the reduction variables. As declared: a convolution's
// (channel, kernel row, kernel column), so B'[n, k] is the weight tensor as stored and a
// k-tile straddles channels and taps. Taps outer: the kernel's rows and columns first and
// the channels innermost, so that a k-tile whose length divides the channel count holds one
// tap: its offset into the input is the same for the whole tile, and each element's is
// its channel's, fixed across k-steps. The weights are then read along k at the kernel's
// area apart, so the sketch copies them into B' once (a kernel of their own) rather than
// gathering them into every tile.
enum class KOrder { kAsDeclared, kTapsOuter };

struct ImplicitGemm {
  schedule::BlockRV a_copy;  // the block copying A into A'[m, k]
  schedule::BlockRV b_copy;  // the block copying B into B'[n, k]
  // The block copying C'[m, n] back into C; none where C' is an intermediate already (a
  // padded plain GEMM whose output another block reads, as an f16 GEMM's cast does).
  std::optional<schedule::BlockRV> c_back;
  // Whether C's innermost dimension follows m rather than n: a convolution's output
  // C[b, co, h, w] has its positions (b, h, w) in m and its channels in n, so the copy back
  // writes whole rows of C only when it walks m innermost. A plain GEMM's C follows n.
  bool output_follows_m = false;
  // Whether k fuses taps before channels (KOrder::kTapsOuter, where that differs).
  bool taps_outer = false;
};

// Applies the presentation to `block` of `sch` when the block is a leaf reduction with one
// write and two inputs, each spatial variable read by at most one input or by both and the
// output (a grouped conv's channel leaves no variable to B alone and is refused), each reduction variable read by both, and the
// block's loops its own; nullopt otherwise, `sch` then unchanged. Throws what the
// primitives throw on preconditions this check did not foresee (the rule catches it).
// With KOrder::kTapsOuter, nullopt too where that order is the declared one (no tap, or
// the taps already outermost).
std::optional<ImplicitGemm> present_as_gemm(schedule::Schedule& sch, const std::string& block,
                                            KOrder k_order = KOrder::kAsDeclared);

// What a tensor-core rule tiles at `block`: a copy of the schedule, the GEMM its block is
// there, and the presentation when the block was a convolution presented as one. nullopt
// for a block already tiled, under a loop that is not plain serial, or neither a GEMM
// (match_gemm) nor presentable (present_as_gemm, whose unforeseen refusals count as no).
struct TensorCoreGemm {
  schedule::Schedule schedule;
  GemmMatch match;
  std::optional<ImplicitGemm> implicit;
  // The operand copies the rule inlines into its shared-memory reads: the presentation's,
  // or those pad_to_tiles made for a plain GEMM. Their loads may be guarded (the padding),
  // so the shared tiles are filled by threads, not by cp.async of global memory as it is.
  std::optional<ImplicitGemm> copies;
  // A plain GEMM's epilogue (epilogue_of): the block the staged output tile's write takes
  // over when there is no copy back, by name (looked up only where a sketch stages).
  std::optional<std::string> epilogue;
};
// With KOrder::kTapsOuter, only a convolution whose taps that order moves.
std::optional<TensorCoreGemm> tensor_core_gemm(const schedule::Schedule& sch, const std::string& block,
                                               KOrder k_order = KOrder::kAsDeclared);

// The one consumer of the GEMM block `gemm`'s output that may take over the write of its
// staged output tile (an epilogue: a bias, an activation, the cast of an f32 accumulator to
// a 16-bit output): the output is an intermediate of the function that exactly one other
// block reads, spatially, at its own iteration variables in order, writing one buffer at
// those same variables in order, so the tile's copy computes it on the way to global
// memory and neither the f32 intermediate nor a second kernel remains. nullopt otherwise.
std::optional<std::string> epilogue_of(const ir::PrimFunc& func, const std::string& gemm);

// The tile of C' a tensor-core sketch's block computes, from its warps' stores into shared
// memory to C itself: `c_shared` is the block's shared write cache (made before the
// accumulator's, `c_warp`, which then writes it), computed at `block_loop`, the innermost
// loop bound to blockIdx; gemm.copies->c_back, or else gemm.epilogue, is folded into its
// write (a copy back's layout map then indexes C: no C' in global memory, no second
// kernel). Returns the tile copy's one fused loop, walked so that consecutive iterations
// write consecutive elements of C, for the rule to spread over its threads. The shared rows
// are padded (storage_align on c_warp): 1 word mod 32 where that walk goes down the tile's
// columns, so that a warp's reads of them hit 32 banks. Throws what the primitives throw
// (C' padded beyond C: the copy back then does not fold).
schedule::LoopRV stage_output_tile(schedule::Schedule& s, schedule::BlockRV c_shared, schedule::BlockRV c_warp,
                                   schedule::LoopRV block_loop, const TensorCoreGemm& gemm);

// What a tensor-core rule offers for `gemm`: the schedule `sketch(s, staged)` makes of a copy
// of gemm.schedule, with its output staged through a shared tile (stage_output_tile) where
// gemm copies its output back or has an epilogue, else, or where that sketch throws or does
// not tensorize on `target` (C' padded beyond C), unstaged; nullopt when neither sketch
// tensorizes.
std::optional<schedule::Schedule> staged_sketch_or_plain(
    const TensorCoreGemm& gemm, const lower::Target& target,
    const std::function<void(schedule::Schedule& s, bool staged)>& sketch);

// Whether an operand copy `copy` of a presented or padded GEMM (writing X'[.., s, k]: s = m
// for A, n for B) reads a transposed matrix: at a grid of points of the copy's domain,
// every unit step of s moves the address it reads by one element and every unit step of k
// by one and the same other amount. A transposed A, a padded GEMM's [k, n] B and a split-K
// GEMM's [k, n] B do, and a 1x1 convolution's input where the points checked stay within
// an image; the input of a convolution with a wider kernel does not (its k steps differ
// between taps, rows and channels). Such an operand is staged by columns ([k, s] shared tiles,
// filled walking s, so consecutive threads read consecutive addresses where walking k a
// warp's reads were a row apart each). Measured on the H100
// (bench/results/2026-12-07-h100-kernelbench-l1-8b8a349.json, where every operand running
// along s was staged so): KB 16 (transposed A) 6.09 -> 3.88 ms, KB 8 (padded) 15.0 -> 11.7
// ms, KB 87 (1x1 conv) 13.25 -> 13.04 ms; but 3x3-class and dilated convolutions up to
// 2.8x slower and a conv3d with a kernel 1 wide 1.7x faster, for reasons not yet profiled,
// so convolutions with wider kernels are left as they were.
bool copy_reads_transposed(const schedule::Schedule& sch, schedule::BlockRV copy);

// Whether an operand copy `copy` stores a plain load, with no guard (no padding's zeros).
// Staged by columns, an unguarded copy that reads a transposed matrix has tiles whose rows
// are whole runs of memory, to be fetched in 16-byte vectors where they align, a lane's
// vector beside the next lane's. A guarded copy is fetched one element a lane, since its
// cp.async go lane by lane and vector lanes would only space a warp's reads apart.
bool copy_is_unguarded(const schedule::Schedule& sch, schedule::BlockRV copy);

// Whether an operand copy `copy` (as above) reads consecutive addresses along s: at least
// seven in eight unit steps of s checked move the address by one element, whatever k
// does. A convolution's input under unit strides, whose m runs along an image row except
// where a row ends: staged by columns, a warp's fetch of one k reads a row's run.
bool copy_reads_along_s(const schedule::Schedule& sch, schedule::BlockRV copy);

// The most work a padded GEMM may do, as a multiple of the GEMM's own (i * j * k). Beyond
// it the tile padding wastes more than the tensor cores' edge over the plain tiling that
// the rule's untouched fork keeps exploring: mma.sync at twice the work still runs well
// ahead of CUDA-core FMAs on every shape the search meets, while a k of 3 padded to 16
// (5.3x) or an m of 1 padded to 16 spends most of each mma on zeros and the candidates'
// measurements on a space that rarely wins.
inline constexpr double kMaxPaddedWork = 2.0;

// Rounds the GEMM of `gemm` (at `block`) up to whole tiles, i to a multiple of `tile_i`,
// j of `tile_j`, k of `tile_k` (the mma's 16 x 8 x 16 or 16 x 8 x 8; wgmma's 64 x N x 64),
// through pad_einsum: a plain GEMM's operands are reindexed first (pad_einsum grows
// intermediates only; the copies, zero where the padding is, are inlined into the shared
// reads as an implicit GEMM's are), and its output too when it is a parameter (the copy
// back then reads the valid region). `gemm.match` and `gemm.copies` are updated. A GEMM
// already whole is left alone (true), unless `copy_operands` asks for a plain GEMM's
// operands reindexed all the same (its B then read [n, k] by the copies, as wgmma reads
// it, whatever its stored layout). false, `gemm` unchanged, when the padded GEMM would do
// more than kMaxPaddedWork times the work, or a primitive refuses.
bool pad_to_tiles(TensorCoreGemm& gemm, const std::string& block, int64_t tile_i, int64_t tile_j, int64_t tile_k,
                  bool copy_operands = false);

}  // namespace dragon::search
