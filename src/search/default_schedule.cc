// The untuned default GPU schedule (default_schedule.h). Each top-level nest in program
// order: a reduction over more terms than a thread should sum serially is spread over
// threads, with the coalesced side on threadIdx.x (the reduce loop when the inputs run
// contiguously along it, as in a row softmax; an output loop otherwise, as in a GEMM or a
// reduction over a middle axis), and over blocks too when one block's threads would
// still each sum too many (partial sums per block, then a second nest sums them); every
// other nest gets AutoBind's binding. The decisions
// are fixed numbers, so the trace replays without sampling.
#include "dragon/search/default_schedule.h"

#include <algorithm>
#include <optional>
#include <string>

#include "dragon/ir/op.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/search/auto_bind.h"
#include "space/block_analysis.h"
#include "space/cross_thread_reduction.h"
#include "dragon/search/tensor_core_default.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;

int64_t power_of_two_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t power_of_two_at_most(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// How badly the reads of `block` coalesce when consecutive threads step `var`: the
// elements read with a stride other than 0 (a broadcast) or 1, summed over the reads
// (each weighted by its buffer's size); a read not affine in `var` counts as strided.
int64_t strided_elements(const ir::BlockNode* block, const ir::Var& var) {
  int64_t total = 0;
  for (const ir::BufferRegion& read : inputs_of(block)) {
    std::optional<int64_t> stride = access_stride(read, var);
    if (stride && (*stride == 0 || *stride == 1 || *stride == -1)) continue;
    total += read.buffer->num_elements();
  }
  return total;
}

// The innermost iteration variable of `kind` with an extent above 1 (the one a fused
// loop's consecutive values step), or nullopt.
std::optional<ir::Var> innermost_var(const ir::BlockNode* block, ir::IterKind kind) {
  for (auto it = block->iter_vars.rbegin(); it != block->iter_vars.rend(); ++it) {
    if (it->kind == kind && ir::as_const_int(it->dom.extent).value_or(1) > 1) return it->var;
  }
  return std::nullopt;
}

class DefaultScheduler {
 public:
  DefaultScheduler(const lower::Target& target, const DefaultScheduleOptions& options)
      : target_(target), options_(options) {}

  // Binds the nest of `name`; false when it was bound already. A scan of few rows over
  // at least `min_chunked_extent` elements (min_chunked_scan_extent when not given) runs
  // in chunks.
  bool bind(Schedule& sch, const std::string& name, std::optional<int64_t> min_chunked_extent = std::nullopt) const {
    std::optional<BlockSite> site = find_block(sch.func(), name);
    if (!site || has_block_binding(*site)) return false;
    if (is_reduction(site->block) && !has_ordered_vars(site->block) &&
        reduce_extent(site->block) > options_.serial_reduction_limit) {
      if (std::optional<Schedule> across = across_threads(sch, name, *site)) {
        sch = std::move(*across);
        return true;
      }
    }
    if (is_reduction(site->block)) accumulate_locally(sch, name);
    if (has_ordered_vars(site->block)) {
      const int64_t min_extent = min_chunked_extent.value_or(options_.min_chunked_scan_extent);
      if (std::optional<Schedule> chunked = chunked_scan(sch, name, *site, min_extent)) {
        sch = std::move(*chunked);
        return true;
      }
      put_ordered_loops_inside(sch, name);
    }
    AutoBindOptions bind_options;
    bind_options.max_threadblocks = options_.max_threadblocks;
    bind_options.max_threads_per_block = options_.threads_per_block;
    bind_options.vector_bytes = target_.max_vector_bytes > 0 ? target_.max_vector_bytes : 16;
    return auto_bind_block(sch, sch.get_block(name), bind_options);
  }

 private:
  // The reduction spread over one block's threads, outputs or terms on threadIdx.x as
  // reads coalesce (or as `layout` says: the partial sums of a cross-block reduction keep
  // their block's choice). When that would leave a thread more than max_terms_per_thread
  // terms and `may_span_blocks`, the reduction spans blocks instead (across_blocks).
  std::optional<Schedule> across_threads(const Schedule& sch, const std::string& name, const BlockSite& site,
                                         std::optional<bool> layout = std::nullopt,
                                         bool may_span_blocks = true) const {
    const ir::BlockNode* block = site.block;
    int64_t reduce = reduce_extent(block), spatial = spatial_extent(block);
    int64_t max_threads = std::min(options_.max_reduction_threads, target_.max_threads_per_block);
    int64_t wanted = power_of_two_at_least((reduce + options_.terms_per_thread - 1) / options_.terms_per_thread);
    // Spatial outputs on threadIdx.x when that is what reads contiguously.
    std::optional<ir::Var> spatial_var = innermost_var(block, ir::IterKind::kSpatial);
    std::optional<ir::Var> reduce_var = innermost_var(block, ir::IterKind::kReduce);
    bool spatial_on_x = layout ? *layout
                               : spatial >= 32 && spatial_var && reduce_var &&
                                     strided_elements(block, *spatial_var) < strided_elements(block, *reduce_var);
    int64_t lanes = std::min<int64_t>(32, max_threads);
    // The most threads this layout gives the reduce terms.
    int64_t most_threads = spatial_on_x ? std::max<int64_t>(2, max_threads / lanes) : max_threads;
    if (may_span_blocks && ceil_div(reduce, most_threads) > options_.max_terms_per_thread) {
      if (std::optional<Schedule> across = across_blocks(sch, name, spatial_on_x, most_threads)) return across;
    }
    Schedule s = sch.copy();
    try {
      BlockRV b = s.get_block(name);
      std::optional<ReductionLoops> loops = gather_reduction_loops(s, b);
      if (!loops) return std::nullopt;
      LoopRV outputs = loops->spatial.empty() ? s.add_unit_loop(loops->reduce)
                       : loops->spatial.size() == 1 ? loops->spatial[0]
                                                    : s.fuse(loops->spatial);
      if (spatial_on_x) {
        int64_t threads = std::clamp<int64_t>(wanted, 2, most_threads);
        std::vector<LoopRV> parts = s.split(outputs, {schedule::None{}, lanes});
        s.bind(parts[0], "blockIdx.x");
        s.bind(parts[1], "threadIdx.x");
        bind_reduction_to_threads(s, loops->reduce, threads, "threadIdx.y");
      } else {
        // At least a warp where the options allow one (clamp's bounds must not cross).
        int64_t at_least = std::min<int64_t>(32, max_threads);
        int64_t threads = std::min(std::clamp<int64_t>(wanted, at_least, max_threads), power_of_two_at_least(reduce));
        int64_t rows = std::min(power_of_two_at_most(spatial), std::max<int64_t>(1, options_.threads_per_block / threads));
        if (rows > 1) {
          std::vector<LoopRV> parts = s.split(outputs, {schedule::None{}, rows});
          s.bind(parts[0], "blockIdx.x");
          s.bind(parts[1], "threadIdx.y");
        } else {
          s.bind(outputs, "blockIdx.x");
        }
        bind_reduction_to_threads(s, loops->reduce, threads, "threadIdx.x");
      }
    } catch (const schedule::ScheduleError&) {
      return std::nullopt;
    }
    // Lowering decides what it can reduce across threads (argmax's pair of values cannot).
    if (!lowers_across_threads(s.func(), target_)) return std::nullopt;
    return s;
  }

  // A reduction left to one thread per output accumulates in registers: each output it
  // writes is cached in "local" storage and written back once, after the reduce loops
  // (kept apart: fused, a conv's 1440 terms paid a div/mod each, 5x slower on KernelBench
  // 62, H100), under the innermost spatial loop (AutoBind then binds those loops, the write-backs
  // inside). Without it every term stored the running value to global memory: argmax,
  // which keeps a value and an index, ran at 0.40x eager on KernelBench 51 (H100).
  // Unchanged when the loops cannot be arranged so (the reduction stays as it was).
  void accumulate_locally(Schedule& sch, const std::string& name) const {
    Schedule s = sch.copy();
    try {
      BlockRV b = s.get_block(name);
      std::optional<ArrangedReductionLoops> loops = arrange_reduction_loops(s, b);
      if (!loops || loops->spatial.empty()) return;
      const LoopRV at = loops->spatial.back();
      const size_t outputs = s.get(b)->writes.size();
      for (size_t k = 0; k < outputs; ++k) s.reverse_compute_at(s.cache_write(b, static_cast<int64_t>(k), "local"), at);
      // The init runs once, ahead of the reduce loops, instead of behind a "first term"
      // test inside them; kept as it was where it cannot be split off.
      Schedule decomposed = s.copy();
      try {
        decomposed.decompose_reduction(decomposed.get_block(name), loops->reduce.front());
        s = std::move(decomposed);
      } catch (const schedule::ScheduleError&) {
      }
    } catch (const schedule::ScheduleError&) {
      return;
    }
    sch = std::move(s);
  }

  // A scan of at most max_chunked_scan_rows rows over at least min_chunked_scan_extent
  // elements runs in chunks (chunk_scan): one thread per row would walk the whole axis
  // (DLRM-Bench R11, one row of 212,993: 9.5 ms against eager's 0.018 ms on the H100).
  // Chunks of the power of two nearest above the axis's square root balance the walk
  // inside a chunk against the carries' walk over the chunks; the totals, the carries and
  // the chunked scan are then bound like any other nest, the carries chunked in turn past
  // min_chunked_carry_extent chunks. nullopt when chunk_scan refuses.
  std::optional<Schedule> chunked_scan(const Schedule& sch, const std::string& name, const BlockSite& site,
                                       int64_t min_extent) const {
    if (!is_unscheduled_scan(site)) return std::nullopt;
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < site.loops.size(); ++i) rows *= *ir::as_const_int(site.loops[i]->extent);
    const int64_t extent = *ir::as_const_int(site.loops.back()->extent);
    if (rows > options_.max_chunked_scan_rows || extent < min_extent) return std::nullopt;
    int64_t chunk = 1;
    while (chunk * chunk < extent) chunk *= 2;
    Schedule s = sch.copy();
    std::string total, carry;
    try {
      std::vector<LoopRV> parts = s.split(s.get_loops(s.get_block(name)).back(), {schedule::None{}, chunk});
      BlockRV total_block = s.chunk_scan(parts[0]);
      total = s.get(total_block)->name;
      carry = s.get(s.get_consumers(total_block).at(0))->name;
    } catch (const schedule::ScheduleError&) {
      return std::nullopt;
    }
    bind(s, total);
    bind(s, carry, options_.min_chunked_carry_extent);
    bind(s, name);
    return s;
  }

  // A scan's loops that feed only spatial variables go outside the ones that feed its
  // ordered variables (arrange_reduction_loops with kOrdered), so AutoBind spreads the
  // scans over threads and each thread walks one scan, innermost. AutoBind binds only the
  // data-parallel loops above all others: a cumsum along its first axis (the ordered loop
  // outermost) ran in one thread. Unchanged when the loops cannot be arranged so.
  void put_ordered_loops_inside(Schedule& sch, const std::string& name) const {
    Schedule s = sch.copy();
    try {
      if (!arrange_reduction_loops(s, s.get_block(name), ir::IterKind::kOrdered)) return;
    } catch (const schedule::ScheduleError&) {
      return;
    }
    sch = std::move(s);
  }

  // A cross-block (grid-level) reduction: the fused reduce loop splits into [chunks, chunk]
  // with chunk at most threads * terms_per_thread; rfactor over the chunks makes a
  // partial-sums nest (one value per output and chunk, in a workspace the size of the
  // outputs times the chunks) whose chunks go on blockIdx.x beside the outputs and whose
  // terms go across the block's threads; the write-back nest then sums each output's
  // partials, bound like any other nest (across threads when they are many, across blocks
  // again when they are very many). nullopt when rfactor refuses the reduction (argmax's
  // pair of values); the caller falls back to one block.
  std::optional<Schedule> across_blocks(const Schedule& sch, const std::string& name, bool spatial_on_x,
                                        int64_t threads) const {
    Schedule s = sch.copy();
    std::string partials_name;
    try {
      BlockRV b = s.get_block(name);
      std::optional<ReductionLoops> loops = gather_reduction_loops(s, b);
      if (!loops) return std::nullopt;
      std::optional<int64_t> reduce = ir::as_const_int(s.get(loops->reduce)->extent);
      if (!reduce) return std::nullopt;
      int64_t chunks = ceil_div(*reduce, threads * std::max<int64_t>(1, options_.terms_per_thread));
      if (chunks < 2) return std::nullopt;
      // Even chunks; then as many as it takes, so every chunk starts inside the reduction
      // (rfactor refuses a partial that would never be initialized).
      int64_t chunk = ceil_div(*reduce, chunks);
      chunks = ceil_div(*reduce, chunk);
      std::vector<LoopRV> parts = s.split(loops->reduce, {chunks, chunk});
      BlockRV partials = s.rfactor(parts[0], /*factor_axis=*/0);
      partials_name = s.get(partials)->name;
      // The chunk loop outermost: the outputs stay innermost among the fused spatial
      // loops, so threadIdx.x still steps them where they read contiguously.
      if (!loops->spatial.empty()) {
        std::vector<LoopRV> nest = s.get_loops(partials);
        size_t at = loops->spatial.size();
        if (nest.size() == at + 2) {
          std::vector<LoopRV> order = {nest[at]};
          order.insert(order.end(), nest.begin(), nest.begin() + static_cast<std::ptrdiff_t>(at));
          s.reorder(order);
        }
      }
    } catch (const schedule::ScheduleError&) {
      return std::nullopt;
    }
    std::optional<BlockSite> partials_site = find_block(s.func(), partials_name);
    if (!partials_site) return std::nullopt;
    std::optional<Schedule> partials =
        across_threads(s, partials_name, *partials_site, spatial_on_x, /*may_span_blocks=*/false);
    if (!partials) return std::nullopt;
    bind(*partials, name);
    return partials;
  }

  const lower::Target& target_;
  const DefaultScheduleOptions& options_;
};

}  // namespace

int apply_default_schedule(Schedule& sch, const lower::Target& target, const DefaultScheduleOptions& options) {
  if (!target.is_gpu()) return 0;
  std::vector<std::string> names;
  for (BlockRV b : sch.get_child_blocks(sch.get_block("root"))) names.push_back(sch.get(b)->name);
  DefaultScheduler scheduler(target, options);
  int bound = 0;
  for (const std::string& name : names) bound += scheduler.bind(sch, name) ? 1 : 0;
  return bound;
}

Schedule default_schedule(const ir::PrimFunc& func, const lower::Target& target, const DefaultScheduleOptions& options) {
  if (options.tensor_cores) {
    if (std::optional<Schedule> tensor_cores = tensor_core_default(func, target, options.max_terms_per_thread)) {
      apply_default_schedule(*tensor_cores, target, options);
      return std::move(*tensor_cores);
    }
  }
  Schedule sch(func);
  apply_default_schedule(sch, target, options);
  return sch;
}

}  // namespace dragon::search
