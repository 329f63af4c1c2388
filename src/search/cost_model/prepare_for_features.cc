// prepare_for_features: the prefix of lower()'s pipeline that features read (block-free,
// buffers still multi-dimensional), as MetaSchedule lowers before PerStoreFeature.
#include "dragon/ir/functor.h"
#include "dragon/lower/passes.h"
#include "dragon/search/program_features.h"
#include "feature_passes.h"

namespace dragon::search {
namespace {

// unroll_loops consumes pragma_auto_unroll_max_step; a copy under another key keeps the
// value for the auto_unroll_max_step column (unroll_loops leaves other annotations).
class KeepAutoUnrollStep : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::ForNode* op) override {
    ir::Stmt body = visit(op->body);
    auto it = op->annotations.find(features::kAutoUnrollKey);
    if (it == op->annotations.end()) {
      return body.same_as(op->body) ? ir::Stmt(op)
                                    : ir::ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body,
                                                        op->thread_tag, op->annotations);
    }
    ir::Annotations annotations = op->annotations;
    annotations[std::string(features::kKeptAutoUnrollKey)] = it->second;
    return ir::ForNode::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag,
                             std::move(annotations));
  }
};

}  // namespace

ir::PrimFunc prepare_for_features(const ir::PrimFunc& scheduled, const lower::Target& target) {
  ir::PrimFunc f = scheduled;
  if (target.is_gpu()) f = lower::lower_cross_thread_reduction(f, target);
  f = lower::lower_reduction_init(f);
  f = lower::plan_buffer_allocation(f);
  f = lower::lower_blocks(f);
  f = lower::simplify_func(f);
  f = lower::compact_buffers(f);
  if (!target.is_gpu()) f = lower::serialize_thread_loops(f);
  f = f.with_body(KeepAutoUnrollStep().visit(f->body));
  return lower::unroll_loops(f);
}

}  // namespace dragon::search
