// AutoInline (MetaSchedule's rule): an element-wise block that is not an output is
// inlined into its consumers (compute_inline); otherwise an element-wise block with a
// single complete producer is inlined into it (reverse_compute_inline: an epilogue such
// as an output cast joins the block that computes what it casts). Caches that tiling
// made (buffers not in global scope) are kept. No fork: inlining is taken whenever the
// primitive accepts it, except (inline_math_into_many = false, the CPU's set) a block that
// calls a math intrinsic (exp, log, tanh, ...) read by more than one consumer: inlining it
// computes the call once per consumer (softmax's exp twice), and on the CPU such a call
// costs more than a store and a load.
#include <optional>

#include "dragon/ir/functor.h"
#include "dragon/schedule/schedule_error.h"
#include "space/block_analysis.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::Schedule;
using schedule::ScheduleError;

// Whether `stmt` calls a math intrinsic (any call but the effect-only ones).
bool calls_math(const ir::Stmt& stmt) {
  struct Finder : ir::StmtExprVisitor {
    bool found = false;
    using ir::StmtExprVisitor::visit_;
    void visit_(const ir::CallNode* op) override {
      if (!ir::intrinsic_is_effect(op->op)) found = true;
      ExprVisitor::visit_(op);
    }
  } finder;
  finder.visit(stmt);
  return finder.found;
}

class AutoInline : public ScheduleRule {
 public:
  AutoInline(bool into_consumer, bool into_producer, bool math_into_many)
      : into_consumer_(into_consumer), into_producer_(into_producer), math_into_many_(math_into_many) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    if (!site || !is_spatial(site->block) || site->block->writes.size() != 1) return {};
    // Stages an earlier rule made on purpose (shared, fragment and register caches, a
    // cooperative fetch, a block to tensorize, a copy kept materialized) stay: only tensors of global scope go.
    if (site->block->writes[0].buffer->scope != "global") return {};
    for (const char* key : {"meta_schedule.cooperative_fetch", "meta_schedule.auto_tensorize", kKeepMaterialized}) {
      if (site->block->annotations.count(key) != 0) return {};
    }
    if (into_consumer_ && (math_into_many_ || !duplicates_math(sch, block, site->block))) {
      if (std::optional<Schedule> inlined = try_inline(sch, block, /*reverse=*/false)) return {*inlined};
    }
    if (into_producer_) {
      if (std::optional<Schedule> inlined = try_inline(sch, block, /*reverse=*/true)) return {*inlined};
    }
    return {};
  }

 private:
  static std::optional<Schedule> try_inline(const Schedule& sch, const std::string& block, bool reverse) {
    Schedule attempt = sch.copy();
    try {
      BlockRV b = attempt.get_block(block);
      if (reverse) {
        // A producer marked for tensorization must keep the intrinsic's exact body.
        for (BlockRV producer : attempt.get_producers(b)) {
          if (attempt.get(producer)->annotations.count("meta_schedule.auto_tensorize") != 0) return std::nullopt;
        }
        attempt.reverse_compute_inline(b);
      } else {
        attempt.compute_inline(b);
      }
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
    return attempt;
  }

  static bool duplicates_math(const Schedule& sch, const std::string& block, const ir::BlockNode* node) {
    if (!calls_math(node->body)) return false;
    Schedule probe = sch.copy();
    return probe.get_consumers(probe.get_block(block)).size() > 1;
  }

  bool into_consumer_;
  bool into_producer_;
  bool math_into_many_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_auto_inline_rule(ParamReader& params, const lower::Target&) {
  bool into_consumer = params.get_bool("into_consumer", true);
  bool into_producer = params.get_bool("into_producer", true);
  bool math_into_many = params.get_bool("inline_math_into_many", true);
  return std::make_unique<AutoInline>(into_consumer, into_producer, math_into_many);
}

}  // namespace dragon::search
