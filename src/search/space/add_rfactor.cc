// AddRFactor (MetaSchedule's rule, here a split-K for the GPU). Multi-level tiling keeps a
// GEMM's whole K loop in one thread and cross-thread reduction spreads a sum over one
// block's threads at most, so a very long f32 sum (KernelBench's K = 524288 GEMM, a
// 2^20-term dot product, a 2^30-term norm) still adds hundreds of thousands of terms in
// one thread and rounds past the harness's tolerance. For a reduction longer than
// `min_reduce_extent` the rule fuses the reduce loops, splits them into [chunks, chunk]
// for each chunk of `chunk_extents`, and rfactors the chunks out: a partial-sums block
// (<name>_rf, the chunks one more spatial axis) that the later rules tile or reduce across
// threads like any block (its K is one chunk), and a write-back block summing each
// output's partials. It forks {one per chunk, untouched} and drops the untouched schedule
// when the rules after it could not keep a thread's serial sum within `max_serial_terms`
// (the whole K for a tiled block, K over the most threads a block has otherwise). Put it
// before the rules that schedule the blocks it makes.
//
// `max_serial_terms` is for outputs compared at their accumulator's own tolerance (an f32
// sum into an f32 output). An f32 accumulator feeding only 16-bit outputs (an f16 GEMM: f32
// C_acc, f16 C) is compared at the 16-bit tolerance, 200 times looser, and its serial sum
// may be far longer: dropping the untouched schedule there dropped every tensor-core
// sketch of a K = 28672 f16 GEMM (LLaMA's down projection), and the split sketches that
// remained drew no valid candidate in 1,280 tries (the H100 data build of 2026-12-05).
// A serial sum's error grows with its length as n^0.5 (random rounding) to n (worst
// case); KernelBench's K = 524288 f32 GEMM measured about n^0.65. The limit scales with
// the tolerance ratio to the power 1.5 (between them, on the cautious side).
#include <algorithm>
#include <cmath>
#include <string>

#include "dragon/harness/tolerance.h"

#include "dragon/schedule/schedule_error.h"
#include "dragon/support/error.h"
#include "space/block_analysis.h"
#include "space/cross_thread_reduction.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::LoopRV;
using schedule::Schedule;
using schedule::ScheduleError;

class AddRFactor : public ScheduleRule {
 public:
  struct Options {
    std::vector<int64_t> chunk_extents;
    int64_t min_reduce_extent = 0;
    int64_t max_serial_terms = 0;
  };
  AddRFactor(Options options, lower::Target target) : options_(std::move(options)), target_(std::move(target)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    if (!site || !applies(*site)) return {};
    const int64_t reduce = reduce_extent(site->block);
    std::vector<Schedule> out;
    for (int64_t chunk : options_.chunk_extents) {
      if (chunk * 2 > reduce) continue;  // at least two chunks
      if (std::optional<Schedule> split = split_reduction(sch, block, chunk)) out.push_back(std::move(*split));
    }
    if (out.empty()) return {};
    if (serial_terms_untouched(site->block) <= serial_terms_limit(sch.func(), site->block)) out.push_back(sch);
    return out;
  }

 private:
  bool applies(const BlockSite& site) const {
    const ir::BlockNode* b = site.block;
    if (!is_reduction(b) || b->writes.size() != 1 || has_ordered_vars(b) || !has_trivial_bindings(site)) return false;
    if (b->annotations.count("meta_schedule.tiling_structure") != 0) return false;
    for (const ir::ForNode* l : site.loops) {
      if (l->for_kind != ir::ForKind::kSerial) return false;
    }
    return reduce_extent(b) > options_.min_reduce_extent;
  }

  // max_serial_terms, scaled for outputs compared more loosely than the accumulator's type
  // (the header says why): the tightest tolerance of the function's float outputs over
  // that of the block's accumulator, to the power 1.5.
  int64_t serial_terms_limit(const ir::PrimFunc& func, const ir::BlockNode* block) const {
    const ir::DataType accumulator = block->writes.front().buffer->dtype;
    const double own = harness::tolerance_floor(accumulator);
    double tightest = 0;
    for (const ir::Param& p : func->params) {
      if (p.role == ir::ParamRole::kInput) continue;
      const double floor = harness::tolerance_floor(p.buffer->dtype);
      if (floor <= 0) return options_.max_serial_terms;  // an exact output: no scaling
      tightest = tightest == 0 ? floor : std::min(tightest, floor);
    }
    if (own <= 0 || tightest <= own) return options_.max_serial_terms;
    const double scaled = static_cast<double>(options_.max_serial_terms) * std::pow(tightest / own, 1.5);
    return static_cast<int64_t>(std::min(scaled, 1e15));
  }

  // The fewest terms one thread sums serially when the block is left to the later rules:
  // multi-level tiling keeps a tiled block's whole reduction in each thread; cross-thread
  // reduction shares the rest among at most a block's threads.
  int64_t serial_terms_untouched(const ir::BlockNode* b) const {
    int64_t reduce = reduce_extent(b);
    if (is_matmul_like(b)) return reduce;
    int64_t threads = std::max<int64_t>(1, target_.max_threads_per_block);
    return (reduce + threads - 1) / threads;
  }

  std::optional<Schedule> split_reduction(const Schedule& sch, const std::string& name, int64_t chunk) const {
    Schedule s = sch.copy();
    try {
      std::optional<ReductionLoops> loops = gather_reduction_loops(s, s.get_block(name));
      if (!loops) return std::nullopt;
      // [ceil(K / chunk), chunk]: every chunk starts inside the reduction, so every
      // partial is initialized (rfactor checks it).
      std::vector<LoopRV> parts = s.split(loops->reduce, {schedule::None{}, chunk});
      s.rfactor(parts[0], /*factor_axis=*/0);
    } catch (const ScheduleError&) {
      return std::nullopt;  // a reducer rfactor does not know (argmax's pair of values)
    }
    return s;
  }

  Options options_;
  lower::Target target_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_add_rfactor_rule(ParamReader& params, const lower::Target& target) {
  AddRFactor::Options options;
  options.chunk_extents = params.get_ints("chunk_extents", {1024, 4096});
  options.min_reduce_extent = params.get_int("min_reduce_extent", 16384);
  options.max_serial_terms = params.get_int("max_serial_terms", 4096);
  if (options.chunk_extents.empty()) throw UserError("rule add_rfactor: chunk_extents is empty");
  for (int64_t c : options.chunk_extents) {
    if (c < 1 || c > options.max_serial_terms) {
      throw UserError("rule add_rfactor: chunk_extents holds " + std::to_string(c) + ", not in [1, max_serial_terms " +
                      std::to_string(options.max_serial_terms) + "]: a chunk is what one thread may still sum serially");
    }
  }
  return std::make_unique<AddRFactor>(std::move(options), target);
}

}  // namespace dragon::search
