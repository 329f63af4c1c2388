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
#include <algorithm>
#include <string>

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
    if (serial_terms_untouched(site->block) <= options_.max_serial_terms) out.push_back(sch);
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
