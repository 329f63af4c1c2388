// RandomComputeLocation (MetaSchedule's rule): a top-level block that was not tiled and has
// consumers is computed at a sampled loop of its consumer (SampleComputeLocation: inline,
// root or a loop), the decision MutateComputeLocation changes. On the GPU it comes after
// AutoBind (the built-in set's order): the block's own bound loops give way to the
// consumer's, so at the consumer's blockIdx loop it runs once per thread block, at its
// threadIdx loop once per thread; and no later rule of the sketch looks up the loops that
// the decision moves (their number would change under another decision). A reduction
// spread over threads stays where it is: moved, its loops would be made serial again.
#include "dragon/schedule/schedule_error.h"
#include "space/block_analysis.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;

class RandomComputeLocation : public ScheduleRule {
 public:
  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    if (!site || site->parent == nullptr || site->parent->name != "root" || site->loops.empty()) return {};
    if (site->block->annotations.count("meta_schedule.tiling_structure") != 0) return {};
    // Not a reduction across threads: compute_at makes the block's loops afresh, serial,
    // and one thread would sum every term (the f32 error of a long sum).
    for (const ir::ForNode* l : site->loops) {
      if (l->for_kind == ir::ForKind::kThreadBinding && l->thread_tag.rfind("threadIdx.", 0) == 0 &&
          loop_feeds_block(l, *site).reduce) {
        return {};
      }
    }
    // The outermost loop holds this block only.
    const ir::ForNode* outer = site->loops.front();
    for (const ir::ForNode* l = outer; l != nullptr; l = l->body.as<ir::ForNode>()) {
      if (l->body.as<ir::ForNode>() == nullptr && l->body.as<ir::BlockRealizeNode>() == nullptr) return {};
    }
    Schedule s = sch.copy();
    try {
      BlockRV b = s.get_block(block);
      std::vector<BlockRV> consumers = s.get_consumers(b);
      if (consumers.empty()) return {};
      // Not into a stage another rule made (a shared or register copy of a tiled block):
      // its loops are the tiling's, spread over threads the producer does not follow.
      const ir::BlockNode* first = s.get(consumers.front());
      if (first->writes.empty() || first->writes[0].buffer->scope != "global") return {};
      LoopRV location = s.sample_compute_location(b);
      s.compute_at(b, location, /*preserve_unit_loops=*/true);
    } catch (const schedule::ScheduleError&) {
      return {};
    }
    return {s};
  }
};

}  // namespace

std::unique_ptr<ScheduleRule> make_random_compute_location_rule(ParamReader&, const lower::Target&) {
  return std::make_unique<RandomComputeLocation>();
}

}  // namespace dragon::search
