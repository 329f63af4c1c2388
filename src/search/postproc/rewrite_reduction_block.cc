// RewriteReductionBlock (MetaSchedule's postprocessor): a reduction block's init moves out
// of its loops (decompose_reduction at the outermost loop feeding a reduce variable), so
// an accumulator is set once per output, not tested on every step. Reductions spread over
// threads are left to lowering (lower_cross_thread_reduction makes their init), as are
// blocks the primitive refuses (lowering guards their init instead).
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/tensor_intrin.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"

namespace dragon::search {
namespace {

bool reduced_across_threads(const BlockSite& site) {
  for (const ir::ForNode* l : site.loops) {
    if (l->for_kind == ir::ForKind::kThreadBinding && l->thread_tag.rfind("blockIdx.", 0) != 0 &&
        loop_feeds_block(l, site).reduce) {
      return true;
    }
  }
  return false;
}

class RewriteReductionBlock : public Postproc {
 public:
  std::optional<std::string> apply(schedule::Schedule& sch) const override {
    for (const std::string& name : block_names(sch.func())) {
      std::optional<BlockSite> site = find_block(sch.func(), name);
      if (!site || !site->block->init.defined() || reduced_across_threads(*site)) continue;
      if (site->block->annotations.count(std::string(schedule::kTensorIntrinAnnotation)) != 0) continue;
      std::optional<size_t> first_reduce;
      // The block's own outermost reduce loop: a loop above it that repeats it (it was
      // computed at another block's loop) must stay outside, or the init would run once
      // for several repetitions of the update.
      for (size_t i = 0; i < site->loops.size() && !first_reduce; ++i) {
        if (loop_feeds_block(site->loops[i], *site).reduce) first_reduce = i;
      }
      if (!first_reduce) continue;
      schedule::BlockRV block = sch.get_block(name);
      std::vector<schedule::LoopRV> loops = sch.get_loops(block);
      try {
        sch.decompose_reduction(block, loops.at(*first_reduce));
      } catch (const schedule::ScheduleError&) {
        continue;  // a failed primitive leaves the schedule as it was
      }
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Postproc> make_rewrite_reduction_block_postproc(ParamReader&, const lower::Target&) {
  return std::make_unique<RewriteReductionBlock>();
}

}  // namespace dragon::search
