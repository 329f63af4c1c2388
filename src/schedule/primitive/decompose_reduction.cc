// decompose_reduction: a reduction block's init becomes a block of its own (spatial
// iteration variables only) placed before a given loop; the update keeps running without
// init. Order of every store is unchanged for each element, so results are bit-exact.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/block_access.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct DecomposeReductionPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Splits a reduction block into an init block (named <block>_init, fresh; spatial
  // iteration variables only) placed right before `loop`, under copies of the loops from
  // `loop` down that feed those variables, and the update: the same block (same name)
  // without init. Returns the init block.
  // Requires:
  //   1) the loop is an ancestor of the block in the block's scope (LoopNotAncestor)
  //   2) the block has an init, its iteration variables are spatial or reduce and the
  //      init does not use a reduce one (NotReductionBlock)
  //   3) no loop above `loop` feeds a reduce iteration variable (LoopBelowReduceLoop)
  //   4) each conjunct of the block's predicate over loops the init does not copy holds
  //      where those loops start, so the init runs for the same elements as before
  //      (UnsupportedPredicate).
  BlockRV decompose_reduction(BlockRV block, LoopRV loop);
  CheckResult check_decompose_reduction(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::DecomposeReductionPlan> plan_decompose_reduction(BlockRV block,
                                                                           std::optional<LoopRV> loop) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The init block's nest, preconditions already checked: the spatial iteration variables
// (fresh copies) bound as in `realize`, under copies of the loops from `loops[top]` down
// that feed them.
Stmt make_init_nest(const BlockRealizeNode* realize, const std::vector<const ForNode*>& loops, size_t top,
                    const std::string& name) {
  const BlockNode* block = realize->block.get();
  std::vector<IterVar> iter_vars;
  std::vector<Expr> values;
  std::unordered_map<const VarNode*, Expr> block_map;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind != IterKind::kSpatial) continue;
    Var v(iv.var.name(), iv.var.dtype());
    iter_vars.push_back(IterVar{v, iv.dom, iv.kind});
    values.push_back(realize->iter_values[i]);
    block_map[iv.var.get()] = v;
  }
  Stmt init = detail::substitute_vars(block->init, block_map);
  BlockAccessRegions regions = detect_block_access_regions(init, Stmt());
  Block init_block = BlockNode::make(name, std::move(iter_vars), regions.reads, regions.writes, init, Stmt(), {},
                                     block->annotations);

  std::vector<const ForNode*> chosen;  // innermost first
  std::vector<const VarNode*> dropped;
  for (size_t p = loops.size(); p-- > top;) {
    bool used = false;
    for (const Expr& v : values) used |= detail::uses_any_var(v, {loops[p]->loop_var.get()});
    if (used) chosen.push_back(loops[p]);
    else dropped.push_back(loops[p]->loop_var.get());
  }
  Expr predicate = detail::kept_conjuncts(realize->predicate, dropped);
  Stmt body = BlockRealizeNode::make(values, predicate, init_block);
  std::unordered_map<const VarNode*, Expr> loop_map;
  for (const ForNode* l : chosen) {
    Var v(l->loop_var.name() + "_init", l->loop_var.dtype());
    loop_map[l->loop_var.get()] = v;
    body = ForNode::make(v, l->min, l->extent, l->for_kind, body, l->thread_tag);
  }
  return detail::substitute_vars(body, loop_map);
}

// The update: the same block without init, reading what it writes (first, as TVM does).
Block make_update(const BlockNode* block) {
  std::vector<BufferRegion> reads;
  for (const BufferRegion& w : block->writes) {
    bool listed = false;
    for (const BufferRegion& r : block->reads) listed |= r.buffer.same_as(w.buffer);
    if (!listed) reads.push_back(w);
  }
  reads.insert(reads.end(), block->reads.begin(), block->reads.end());
  return BlockNode::make(block->name, block->iter_vars, std::move(reads), block->writes, block->body, Stmt(),
                         block->alloc_buffers, block->annotations);
}

}  // namespace

// What decompose_reduction's construction needs: the block's realization, the loops
// above it in its scope and the position of the given one among them.
struct detail::DecomposeReductionPlan {
  const BlockRealizeNode* realize = nullptr;
  const ForNode* loop = nullptr;
  std::vector<const ForNode*> loops;
  size_t top = 0;
};

detail::Planned<detail::DecomposeReductionPlan> Schedule::plan_decompose_reduction(
    BlockRV block_rv, std::optional<LoopRV> loop_rv) const {
  constexpr InstructionKind kKind = InstructionKind::DecomposeReduction;
  auto found_block = find(block_rv, kKind, "block");
  if (!found_block.ok()) return std::move(found_block).take_error();
  const BlockNode* block = *found_block;
  const ForNode* loop = nullptr;
  if (loop_rv) {
    auto found_loop = find(*loop_rv, kKind, "loop");
    if (!found_loop.ok()) return std::move(found_loop).take_error();
    loop = *found_loop;
  }
  auto block_operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus at_block{nullptr, block->name};
  const BlockTree::BlockInfo& info = *tree_->find(block);
  detail::DecomposeReductionPlan plan;
  plan.realize = info.realize;
  plan.loop = loop;
  const std::span<const ForNode* const> scope_loops = info.scope_loops();
  std::vector<const ForNode*>& loops = plan.loops;
  loops.assign(scope_loops.begin(), scope_loops.end());
  const BlockRealizeNode* realize = plan.realize;
  size_t& top = plan.top;
  top = loop ? std::find(loops.begin(), loops.end(), loop) - loops.begin() : 0;
  if (loop && top == loops.size()) {
    return error(
        kKind, 1, "LoopNotAncestor", [&] { return fmt::format("loop {}", rv_name(*loop_rv)); },
        [&] { return fmt::format("the loop is not an ancestor of block '{}' in its scope", block->name); },
        ErrorLocus{loop->loop_var.get(), {}});
  }
  if (!block->init.defined()) {
    return error(
        kKind, 2, "NotReductionBlock", block_operand,
        [&] { return fmt::format("block '{}' has no init", block->name); }, at_block);
  }
  std::vector<const VarNode*> reduce_vars;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kReduce) {
      reduce_vars.push_back(iv.var.get());
    } else if (iv.kind != IterKind::kSpatial) {
      return error(
          kKind, 2, "NotReductionBlock", block_operand,
          [&] {
            return fmt::format("iteration variable '{}' is {}, not spatial or reduce", iv.var.name(),
                               iter_kind_name(iv.kind));
          },
          at_block);
    }
  }
  // The init runs once per element: it may not depend on where the reduction is.
  std::unordered_map<const VarNode*, Expr> zero_reduce;
  for (const VarNode* v : reduce_vars) zero_reduce[v] = make_zero(v->dtype);
  if (!detail::substitute_vars(block->init, zero_reduce).same_as(block->init)) {
    return error(kKind, 2, "NotReductionBlock", block_operand, "the init uses a reduce iteration variable", at_block);
  }
  if (!loop) return plan;  // the rest reads the loop
  auto loop_operand = [&] { return fmt::format("loop {}", rv_name(*loop_rv)); };
  const ErrorLocus at_loop{loop->loop_var.get(), {}};
  for (size_t p = 0; p < top; ++p) {
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i].kind == IterKind::kReduce &&
          detail::uses_any_var(realize->iter_values[i], {loops[p]->loop_var.get()})) {
        return error(
            kKind, 3, "LoopBelowReduceLoop", loop_operand,
            [&] {
              return fmt::format("loop '{}' above it feeds reduce iteration variable '{}'", loops[p]->loop_var.name(),
                                 block->iter_vars[i].var.name());
            },
            at_loop);
      }
    }
  }
  std::vector<const ForNode*> dropped;  // loops from `loop` down that feed no spatial variable
  for (size_t p = top; p < loops.size(); ++p) {
    bool used = false;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      used |= block->iter_vars[i].kind == IterKind::kSpatial &&
              detail::uses_any_var(realize->iter_values[i], {loops[p]->loop_var.get()});
    }
    if (!used) dropped.push_back(loops[p]);
  }
  Analyzer analyzer;
  for (const ForNode* l : loops) analyzer.bind(l->loop_var, Range{l->min, l->extent});
  if (!detail::dropped_guards_hold(realize->predicate, dropped, analyzer)) {
    return error(
        kKind, 4, "UnsupportedPredicate", block_operand,
        [&] {
          return fmt::format(
              "the predicate {} of block '{}' may fail where the reduction starts, so the init block "
              "would run for elements the init did not",
              print_expr(realize->predicate), block->name);
        },
        at_block);
  }
  return plan;
}

BlockRV Schedule::decompose_reduction(BlockRV block_rv, LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::DecomposeReduction;
  const detail::DecomposeReductionPlan plan = plan_decompose_reduction(block_rv, loop_rv).take();
  const BlockRealizeNode* realize = plan.realize;
  const BlockNode* block = realize->block.get();
  const ForNode* loop = plan.loop;
  const std::vector<const ForNode*>& loops = plan.loops;
  const size_t top = plan.top;
  const std::string init_name = detail::fresh_block_name(func_, block->name + "_init");
  Stmt init_nest = make_init_nest(realize, loops, top, init_name);
  Stmt updated = detail::replace_stmt(Stmt(loop), block, make_update(block));
  PrimFunc func = detail::replace_in_func(func_, loop, SeqStmtNode::make({init_nest, updated}));

  BlockRV out = new_block_rv(init_name);
  commit(std::move(func), detail::make_instruction(kKind, {out}, block_rv, loop_rv));
  return out;
}

CheckResult Schedule::check_decompose_reduction(const detail::CheckedOperands& ops) const {
  ops.expect(2, 0);
  auto block = ops.block(0);
  auto loop = ops.loop(1);
  if (!block) return detail::unknown();
  return detail::verdict(plan_decompose_reduction(*block, loop), loop.has_value(), 1);
}

namespace detail {

constexpr auto kDecomposeReductionSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::input("loop", ValueType::kLoop),
});

constinit const InstructionSignature kDecomposeReductionSignature{
    .python_name = "decompose_reduction",
    .slots = kDecomposeReductionSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_method<&Schedule::decompose_reduction>,
    .check = check_method<&Schedule::check_decompose_reduction>,
};

}  // namespace detail
}  // namespace dragon::schedule
