// MultiLevelTilingTensorCore (MetaSchedule's rule, with our mma.sync intrinsics): a
// GEMM-shaped block C[.., i, j] += f32(A[.., i, k]) * f32(B[.., k, j] or B[.., j, k]) with
// f16 or bf16 inputs is cut into 16x8x16 tiles (m16n8k16), with f32 inputs into 16x8x8
// tiles (m16n8k8 tf32; the variant, tf32 or 3xtf32, a sampled decision from the rule's
// f32_intrins, rewritten by rewrite_tensorize and redrawn by mutate_tile_size), the tile
// loops tiled SSSRRSRS (batch loops join the outermost level), bound to blockIdx.y,
// blockIdx.x and threadIdx.y (one warp per threadIdx.y; tensorized blocks use the 32
// lanes), inputs staged in shared.dyn
// (rows padded against bank conflicts, cooperative fetch) and register fragments
// ("warp"), the accumulator in fragments stored back per warp. The blocks are annotated
// "meta_schedule.auto_tensorize" = <intrinsic>; the rewrite_tensorize postprocessor
// tensorizes them. Forks {tensor cores, untouched}, and for a convolution whose kernel is
// wider than 1 {tensor cores with the taps outermost in k, tensor cores, untouched}: plain
// tiling stays in the space. On
// sm_90 the wgmma rule (multi_level_tiling_wgmma.cc) comes first in the CUDA set; this rule
// sees the GEMM its untouched fork leaves. The GEMM matcher is gemm_match.h.
// A convolution-like block (a reduction whose reads are not a plain GEMM's) is first
// presented as one (implicit_gemm.h: reindexed operands, a fused m x n x k block), its
// operand copies then inlined into the shared-memory reads, so the shared tiles gather
// straight from the padded input and the weights (implicit GEMM, no im2col buffer), and
// its output staged through a shared tile into C (stage_output_tile, implicit_gemm.h).
// With the taps outermost (KOrder::kTapsOuter) the weights' copy stays a kernel of its own
// and the input, where it runs along m, is staged by columns.
// A GEMM whose i, j or k is not a multiple of the mma tile (a conv's k = 3 * 3 * 3 = 27,
// a 100 x 60 matmul) is padded to whole tiles first (pad_to_tiles, implicit_gemm.h: a
// plain GEMM's operands reindexed, then pad_einsum; the copies write zeros in the padding
// and are inlined into the shared reads), unless that would more than double the work.
#include <algorithm>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/ir/op.h"
#include "dragon/lower/async_copy_source.h"
#include "dragon/schedule/index_map.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/tensor_intrin.h"
#include "dragon/support/error.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"
#include "space/gemm_match.h"
#include "space/implicit_gemm.h"
#include "space/multi_level_tiling.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::ExprRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::SplitFactor;

// The mma.sync intrinsics for a matched GEMM's types, and the instruction's k. For f32
// the mma named is the one-pass tf32 one; the sampled kTf32Passes picks the variant.
struct MmaIntrins {
  std::string mma, load_a, load_b;
  int64_t k = 16;
};

// Which copied operands are staged by columns ([k, m] or [k, n]: each reads a transposed
// matrix, copy_reads_transposed, or runs along m, copy_reads_along_s), their fragments then
// loaded transposed; and which of those are fetched in vectors (unguarded transposed
// matrices: copy_reads_transposed and copy_is_unguarded) rather than one element a lane.
struct ColumnStaging {
  bool a = false, b = false;
  bool a_vectors = false, b_vectors = false;
};

MmaIntrins mma_intrins(const GemmMatch& m, ColumnStaging columns = {}) {
  if (m.dtype == ir::DataType::f32()) {
    // A 16-bit operand beside an f32 one keeps its type in shared memory and fragments.
    const std::string a = ir::to_string(m.a_dtype), b = ir::to_string(m.b_dtype);
    const std::string load_b = columns.b ? "mma_load_b_n8k8_from_k8n8_"
                               : m.trans_b ? "mma_load_b_trans_n8k8_"
                                           : "mma_load_b_k8n8_";
    return MmaIntrins{schedule::tf32_mma_intrin_name(1, m.trans_b, a, b),
                      (columns.a ? "mma_load_a_m16k8_from_k8m16_" : "mma_load_a_m16k8_") + a, load_b + b, 8};
  }
  const std::string half = ir::to_string(m.dtype);
  const std::string load_b = columns.b ? "mma_ldmatrix_b_n8k16_from_k16n8_"
                             : m.trans_b ? "mma_ldmatrix_b_trans_n8k16_"
                                         : "mma_ldmatrix_b_k16n8_";
  return MmaIntrins{"mma_m16n8k16_" + half + half + "f32" + (m.trans_b ? "_trans_b" : ""),
                    (columns.a ? "mma_ldmatrix_a_m16k16_from_k16m16_" : "mma_ldmatrix_a_m16k16_") + half,
                    load_b + half, 16};
}

// The map of a shared tile X[.., s, k] to X[.., k, s].
schedule::IndexMap swap_last_two(size_t rank) {
  std::vector<std::string> names;
  for (size_t d = 0; d < rank; ++d) names.push_back(fmt::format("i{}", d));
  std::vector<std::string> results = names;
  std::swap(results[rank - 2], results[rank - 1]);
  return schedule::IndexMap::parse(
      fmt::format("lambda {}: ({})", fmt::join(names, ", "), fmt::join(results, ", ")));
}

// The tf32 variants a rule may sample, by the rule data's names: passes of the mma.
int64_t tf32_passes_of(const std::string& name, std::string_view param) {
  if (name == "tf32") return 1;
  if (name == "3xtf32") return 3;
  throw UserError(fmt::format("rule multi_level_tiling_tensor_core: {} entry '{}' is not tf32 or 3xtf32", param, name));
}

// Whether the shared tiles of `buffer` can be filled by cp.async: it is a parameter, a
// reduction's output (left in global memory), or a copy of such a buffer (a load of the same
// type under selects whose other side is zero: a reindex, a padding) that inlines into the
// tile's fetch. Whatever else a producer computes (softmax weights, a cast) inlines into
// the fetch as arithmetic, which cp.async cannot do: verify_gpu_code refused every
// pipelined candidate of attention's f32 weights times bf16 V for it.
bool fetchable_by_cp_async(const ir::PrimFunc& func, const ir::Buffer& buffer, int depth = 0) {
  if (depth > 8) return false;
  for (const std::string& name : block_names(func)) {
    std::optional<BlockSite> site = find_block(func, name);
    if (!site || site->block->writes.size() != 1 || !site->block->writes[0].buffer.same_as(buffer)) continue;
    if (is_reduction(site->block)) return true;
    const auto* store = site->block->body.as<ir::BufferStoreNode>();
    if (store == nullptr) return false;
    const ir::BufferLoadNode* load = lower::peel_zero_selects(store->value).load;
    return load != nullptr && load->buffer->dtype == buffer->dtype && fetchable_by_cp_async(func, load->buffer, depth + 1);
  }
  return true;  // no block writes it: a parameter
}

struct TensorCoreOptions {
  MultiLevelTilingOptions tiling;  // vector lengths, warp size, limits
  int64_t max_innermost_factor = 4;
  int64_t row_padding = 8;
  std::string shared_scope = "shared.dyn";
  // f32 GEMMs: the tf32 mma's pass counts to sample among (1: tf32, 3: 3xtf32).
  std::vector<int64_t> tf32_passes = {1, 3};
  // The same for blocks presented as GEMMs (convolutions): libtorch eager runs cuDNN's
  // convolutions in TF32 and the harness calibrates its tolerance on eager's own error, so
  // one-pass TF32 may pass there while it fails every plain f32 GEMM's check.
  std::vector<int64_t> implicit_tf32_passes = {1, 3};
  // The same for GEMMs of one f32 and one 16-bit operand (an f32 activation times bf16
  // weights): the 16-bit operand is exact in TF32, and such a layer's reference rounds far
  // more than one-pass TF32 does (libtorch's bf16 matmul rounds its product to bf16).
  std::vector<int64_t> mixed_tf32_passes = {1, 3};
  // Software-pipeline depths of the k-step loop to sample among (1: unpipelined): the
  // shared tiles are then filled by cp.async a step or two ahead of the mma loop that
  // reads them (rewrite_software_pipeline, inject_software_pipeline), so the global loads
  // overlap the math instead of stalling it behind a barrier every k step. An implicit or
  // padded GEMM's tiles gather and hold zeros: each element is a 4-byte cp.async at its
  // gathered address, zero-filled where the padding is (lower/async_copy_source.h); what
  // cp.async cannot copy (2-byte elements one at a time) is stored at once, which the
  // pipeline's barriers cover too. Empty: never pipelined.
  std::vector<int64_t> pipeline_stages = {1, 2, 3};
};

class MultiLevelTilingTensorCore : public ScheduleRule {
 public:
  MultiLevelTilingTensorCore(TensorCoreOptions options, lower::Target target)
      : options_(std::move(options)), target_(std::move(target)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    // A convolution presented as a GEMM with its taps outermost in k (implicit_gemm.h's
    // KOrder) first, where that order differs from the declared one; then a GEMM, or a
    // convolution-like block presented as one in the declared order; then the block as it is.
    std::vector<Schedule> out;
    for (KOrder order : {KOrder::kTapsOuter, KOrder::kAsDeclared}) {
      if (std::optional<Schedule> s = tensor_core_sketch(sch, block, order)) out.push_back(std::move(*s));
    }
    if (out.empty()) return {};
    out.push_back(sch);
    return out;
  }

 private:
  std::optional<Schedule> tensor_core_sketch(const Schedule& sch, const std::string& block, KOrder order) const {
    std::optional<TensorCoreGemm> gemm = tensor_core_gemm(sch, block, order);
    if (!gemm) return std::nullopt;
    // Shapes that are not whole mma tiles are padded to them (zeros in the operand copies),
    // unless that would more than double the work (kMaxPaddedWork, implicit_gemm.h).
    if (!pad_to_tiles(*gemm, block, 16, 8, mma_intrins(gemm->match).k)) return std::nullopt;
    const GemmMatch& match = gemm->match;
    const bool mixed = match.a_dtype != match.b_dtype;
    const std::vector<int64_t>& passes = gemm->implicit ? options_.implicit_tf32_passes
                                         : mixed        ? options_.mixed_tf32_passes
                                                        : options_.tf32_passes;
    if (match.dtype == ir::DataType::f32() && passes.empty()) return std::nullopt;
    // An output copied back from C'[m, n] (a convolution's, a padded GEMM's) is staged
    // through shared memory and written straight into C where the copy back folds; a plain
    // GEMM's epilogue (bias, activation, cast) is computed on the tile's way out.
    return staged_sketch_or_plain(*gemm, target_,
                                  [&](Schedule& t, bool staged) { sketch(t, block, *gemm, passes, staged); });
  }

  // `stage_output`: the accumulators go through a shared tile of the block's C' into C
  // itself (copies->c_back, or the epilogue, folded into that tile's write), instead of
  // into C' in global memory and a second kernel's copy back: the copy back of a
  // convolution's C'[m, n] read one layout and wrote the other, so one side of it was a
  // strided access per element; an epilogue's kernel read the whole f32 C' back.
  void sketch(Schedule& s, const std::string& name, const TensorCoreGemm& gemm, const std::vector<int64_t>& tf32_passes,
              bool stage_output) const {
    const GemmMatch& m = gemm.match;
    const std::optional<ImplicitGemm>& copies = gemm.copies;
    // A copied operand that is a transposed matrix in memory (a transposed A, a [k, n] B
    // copied for padding or split-K) is staged [k, m] or [k, n] and fetched walking its
    // rows: a warp then reads consecutive addresses and stores whole shared rows, where
    // walking k its reads were a row apart each. Its fragments load transposed.
    ColumnStaging columns;
    // Taps outer: the weights are copied into B'[n, k] by a kernel of their own (read along
    // k they are a kernel's area apart), and the input, where it runs along m, is staged
    // by columns: each element's address is then its m's and its channel's, fixed across
    // k-steps, plus the step's tap (implicit_gemm.h), where walking k in a row of the
    // tile it was recomputed from k at every step.
    const bool taps_outer = copies && copies->taps_outer;
    if (copies) {
      columns.a = taps_outer ? copy_reads_along_s(s, copies->a_copy) : copy_reads_transposed(s, copies->a_copy);
      columns.b = !taps_outer && m.trans_b && copy_reads_transposed(s, copies->b_copy);
      // Taps outer, A runs along m (not a transposed matrix): gathered element by element.
      columns.a_vectors = !taps_outer && columns.a && copy_is_unguarded(s, copies->a_copy);
      columns.b_vectors = columns.b && copy_is_unguarded(s, copies->b_copy);
    }
    const MmaIntrins intrins = mma_intrins(m, columns);
    const bool f32 = m.dtype == ir::DataType::f32();
    BlockRV c = s.get_block(name);
    s.annotate(c, "meta_schedule.tiling_structure", std::string("SSSRRSRS"));
    std::optional<BlockRV> c_shared;
    if (stage_output) c_shared = s.cache_write(c, 0, options_.shared_scope);
    BlockRV c_warp = s.cache_write(c, 0, "warp");
    BlockRV a_shared = s.cache_read(c, 0, options_.shared_scope, {c});
    BlockRV a_warp = s.cache_read(c, 0, "warp", {c});
    BlockRV b_shared = s.cache_read(c, 1, options_.shared_scope, {c});
    BlockRV b_warp = s.cache_read(c, 1, "warp", {c});
    // Transposed after the fragments' caches, which keep the layout the mma reads and then
    // read the shared tiles transposed.
    for (auto [shared, by_columns] : {std::pair{a_shared, columns.a}, std::pair{b_shared, columns.b}}) {
      if (by_columns) {
        s.transform_layout(shared, 0, schedule::Schedule::BufferIndexType::kWrite,
                           swap_last_two(s.get(shared)->writes[0].buffer->shape.size()));
      }
    }
    if (copies) {
      // The shared copies read the operands through the reindexing (and the padding's
      // guards): A'[m, k] is never materialized, nor is B'[n, k] but with the taps outer.
      s.compute_inline(copies->a_copy);
      if (taps_outer) {
        s.annotate(copies->b_copy, kKeepMaterialized, int64_t{1});
      } else {
        s.compute_inline(copies->b_copy);
      }
    }
    std::vector<LoopRV> loops = s.get_loops(c);
    std::vector<LoopRV> it = s.split(loops[m.i], {schedule::None{}, int64_t{16}});
    std::vector<LoopRV> jt = s.split(loops[m.j], {schedule::None{}, int64_t{8}});
    std::vector<LoopRV> kt = s.split(loops[m.k], {schedule::None{}, intrins.k});
    auto tile = [&](LoopRV loop, int n) {
      std::vector<ExprRV> f = s.sample_perfect_tile(loop, n, static_cast<int>(options_.max_innermost_factor));
      return s.split(loop, std::vector<SplitFactor>(f.begin(), f.end()));
    };
    std::vector<LoopRV> i = tile(it[0], 5);
    std::vector<LoopRV> j = tile(jt[0], 5);
    std::vector<LoopRV> k = tile(kt[0], 3);
    std::vector<LoopRV> order;
    for (size_t b : m.batch) order.push_back(loops[b]);
    std::vector<LoopRV> tail = {i[0], j[0], i[1], j[1], i[2], j[2], k[0], k[1], i[3], j[3], k[2], i[4], j[4], it[1], jt[1], kt[1]};
    order.insert(order.end(), tail.begin(), tail.end());
    s.reorder(order);
    std::vector<LoopRV> outer;
    for (size_t b : m.batch) outer.push_back(loops[b]);
    outer.push_back(i[0]);
    outer.push_back(j[0]);
    LoopRV by = s.fuse(outer);
    s.bind(by, "blockIdx.y");
    LoopRV bx = s.fuse({i[1], j[1]});
    s.bind(bx, "blockIdx.x");
    LoopRV ty = s.fuse({i[2], j[2]});
    s.bind(ty, "threadIdx.y");
    s.annotate(c, "meta_schedule.thread_extent_low_inclusive", options_.tiling.warp_size);
    s.annotate(c, "meta_schedule.thread_extent_high_inclusive", options_.tiling.max_threads_per_block);
    s.reverse_compute_at(c_warp, ty, true, -1);
    if (c_shared) {
      stage_output_tile(s, *c_shared, c_warp, bx, gemm);
      if (copies && copies->c_back) {
        // One element per thread and step: C's index is a layout map's (div and mod of m),
        // which no vector access follows.
        s.annotate(*c_shared, "meta_schedule.cooperative_fetch", int64_t{1});
      } else {
        // An epilogue writes C at the tile's own indices: rows of whole vectors, as wide as
        // its widest element allows (the f32 tile it reads, where it writes 16 bits).
        annotate_cooperative_fetch(s, *c_shared, widest_element_bytes(s.get(*c_shared)), options_.tiling);
      }
    }
    // Fragments per R1 step, shared tiles per R0 step (consumers first: compute_at needs
    // every reader of a cache under the loop).
    s.compute_at(a_warp, k[1], true, -1);
    s.compute_at(b_warp, k[1], true, -1);
    for (BlockRV shared : {a_shared, b_shared}) {
      int bytes = s.get(shared)->writes[0].buffer->dtype.bytes();
      // f32 fragments are read by lane or by ldmatrix (cuda_mma_tf32.cc): a row stride of
      // 4 mod 8 words keeps A and [n, k] B conflict-free (eight rows times an odd number of
      // 16-byte units cover all 32 banks), 8 mod 16 the [k, n] B; 16-bit tiles take
      // row_padding mod twice it (8 mod 16 halves: 16-byte rows an odd unit apart). The
      // stride is the smallest such one past the row: a k-tile of 8 floats pads to 12, where
      // a factor of 32 padded it to 36 and tripled the shared memory a stage holds.
      // Staged by columns: the tile's rows are k (a [k, n] B's, or a transposed copy's).
      const bool staged_by_columns = shared == a_shared ? columns.a : columns.b;
      const bool k_rows = staged_by_columns || (shared == b_shared && !m.trans_b);
      int64_t padding = options_.row_padding;
      if (f32) padding = k_rows ? 8 : 4;
      s.compute_at(shared, k[0], true, -1);
      if (padding > 0) s.storage_align(shared, 0, -2, 2 * padding, padding);
      std::vector<LoopRV> cl = s.get_loops(shared);
      LoopRV outer = cl[cl.size() - 2], inner = cl[cl.size() - 1];
      if (staged_by_columns) {
        // The copy's loops still run (m or n, k): walk the tile's rows innermost. A row of
        // an unguarded transposed matrix is a run of memory: vectors, a lane's beside the
        // next lane's. Otherwise one element a thread and step, so that a warp's 32 reads
        // are 32 neighbours (a gathered or guarded tile's cp.async go element by element,
        // and vector lanes would only space the threads apart).
        s.reorder({inner, outer});
        s.fuse({inner, outer});
        if (shared == a_shared ? columns.a_vectors : columns.b_vectors) {
          annotate_cooperative_fetch(s, shared, bytes, options_.tiling);
        } else {
          s.annotate(shared, "meta_schedule.cooperative_fetch", int64_t{1});
        }
        continue;
      }
      s.fuse({outer, inner});
      annotate_cooperative_fetch(s, shared, bytes, options_.tiling);
    }
    const std::vector<ir::BufferRegion> operands = inputs_of(s.get(c));
    const bool fetchable = std::all_of(operands.begin(), operands.end(), [&](const ir::BufferRegion& r) {
      return fetchable_by_cp_async(s.func(), r.buffer);
    });
    if (!options_.pipeline_stages.empty() && fetchable) {
      const size_t n = options_.pipeline_stages.size();
      s.annotate(k[0], std::string(kSoftwarePipelineDepth),
                 s.sample_categorical(options_.pipeline_stages, std::vector<double>(n, 1.0 / static_cast<double>(n))));
    }
    s.annotate(c, kAutoTensorize, intrins.mma);
    if (f32) {
      const size_t n = tf32_passes.size();
      std::vector<double> probs(n, 1.0 / static_cast<double>(n));
      s.annotate(c, std::string(kTf32Passes), s.sample_categorical(tf32_passes, probs));
    }
    s.annotate(a_warp, kAutoTensorize, intrins.load_a);
    s.annotate(b_warp, kAutoTensorize, intrins.load_b);
    s.annotate(c_warp, kAutoTensorize, std::string("mma_store_m16n8_f32"));
  }

  TensorCoreOptions options_;
  lower::Target target_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_multi_level_tiling_tensor_core_rule(ParamReader& params, const lower::Target& target) {
  TensorCoreOptions options;
  options.tiling.vector_load_lens = params.get_ints("vector_load_lens", {1, 2, 4, 8});
  options.tiling.warp_size = target.warp_size > 0 ? target.warp_size : 32;
  options.tiling.max_threads_per_block = target.max_threads_per_block > 0 ? target.max_threads_per_block : 1024;
  options.tiling.max_vector_bytes = target.max_vector_bytes > 0 ? target.max_vector_bytes : 16;
  options.max_innermost_factor = params.get_int("max_innermost_factor", 4);
  options.row_padding = params.get_int("row_padding", 8);
  if (options.row_padding < 0) {
    throw UserError(fmt::format("rule multi_level_tiling_tensor_core: row_padding is {} (at least 0; 0 leaves the rows unpadded)",
                                options.row_padding));
  }
  options.shared_scope = params.get_string("shared_scope", "shared.dyn");
  options.tf32_passes.clear();
  for (const std::string& name : params.get_strings("f32_intrins", {"tf32", "3xtf32"})) {
    options.tf32_passes.push_back(tf32_passes_of(name, "f32_intrins"));
  }
  options.implicit_tf32_passes.clear();
  for (const std::string& name : params.get_strings("f32_implicit_gemm_intrins", {"tf32", "3xtf32"})) {
    options.implicit_tf32_passes.push_back(tf32_passes_of(name, "f32_implicit_gemm_intrins"));
  }
  options.mixed_tf32_passes.clear();
  for (const std::string& name : params.get_strings("f32_mixed_intrins", {"tf32", "3xtf32"})) {
    options.mixed_tf32_passes.push_back(tf32_passes_of(name, "f32_mixed_intrins"));
  }
  options.pipeline_stages = params.get_ints("pipeline_stages", options.pipeline_stages);
  for (int64_t d : options.pipeline_stages) {
    if (d < 1) {
      throw UserError(fmt::format("rule multi_level_tiling_tensor_core: pipeline_stages holds {} (at least 1)", d));
    }
  }
  if (options.shared_scope != "shared" && options.shared_scope != "shared.dyn") {
    throw UserError("rule multi_level_tiling_tensor_core: shared_scope must be shared or shared.dyn");
  }
  return std::make_unique<MultiLevelTilingTensorCore>(std::move(options), target);
}

}  // namespace dragon::search
