// lower_reduction_init: a reduction block's init becomes a store guarded by "every reduce
// iteration variable is at its domain's min", in front of the update. Not a
// decomposition into separate init loops (that is the decompose_reduction primitive).
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

// The guard is stated on the block's own iteration variables, exactly the rule that
// defines when init runs, so it stays right whatever the schedule did to the loops that
// feed them (reordered, split, fused or rfactored reduce loops).
class ReductionInitLowerer : public ir::StmtMutator {
 protected:
  ir::Stmt visit_(const ir::BlockNode* op) override {
    ir::Stmt visited = ir::StmtMutator::visit_(op);  // nested blocks first
    const auto* block = visited.as<ir::BlockNode>();
    if (!block->init.defined()) return visited;
    ir::Expr at_first_iteration;
    for (const ir::IterVar& iv : block->iter_vars) {
      if (iv.kind != ir::IterKind::kReduce) continue;
      ir::Expr at_min = ir::eq(iv.var, iv.dom.min);
      at_first_iteration = at_first_iteration.defined() ? (at_first_iteration && at_min) : at_min;
    }
    DRAGON_CHECK(at_first_iteration.defined(), "block '{}' has an init but no reduce iteration variable",
                 block->name);
    ir::Stmt body = ir::SeqStmtNode::make({ir::IfThenElseNode::make(at_first_iteration, block->init), block->body});
    return ir::BlockNode::make(block->name, block->iter_vars, block->reads, block->writes, std::move(body),
                               /*init=*/{}, block->alloc_buffers, block->annotations);
  }
};

}  // namespace

ir::PrimFunc lower_reduction_init(const ir::PrimFunc& func) {
  return func.with_body(ReductionInitLowerer().visit(func->body));
}

}  // namespace dragon::lower
