// decompose_reduction: a reduction block's init becomes a block of its own (spatial
// iteration variables only) placed before a given loop; the update keeps running without
// init. Order of every store is unchanged for each element, so results are bit-exact.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/block_access.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../ir_tree.h"

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

BlockRV Schedule::decompose_reduction(BlockRV block_rv, LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::DecomposeReduction;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  const std::string block_operand = fmt::format("block {}", rv_name(block_rv));
  const std::string loop_operand = fmt::format("loop {}", rv_name(loop_rv));
  const ErrorLocus at_block{nullptr, block->name};
  const ErrorLocus at_loop{loop->loop_var.get(), {}};

  std::vector<const StmtNode*> path = detail::path_to(func_, block);
  std::vector<const ForNode*> loops = detail::loops_above(path);
  const auto* realize = static_cast<const BlockRealizeNode*>(path[path.size() - 2]);
  size_t top = std::find(loops.begin(), loops.end(), loop) - loops.begin();
  if (top == loops.size()) {
    throw error(kKind, 1, "LoopNotAncestor", loop_operand,
                fmt::format("the loop is not an ancestor of block '{}' in its scope", block->name), at_loop);
  }
  if (!block->init.defined()) {
    throw error(kKind, 2, "NotReductionBlock", block_operand,
                fmt::format("block '{}' has no init", block->name), at_block);
  }
  std::vector<const VarNode*> reduce_vars;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kReduce) {
      reduce_vars.push_back(iv.var.get());
    } else if (iv.kind != IterKind::kSpatial) {
      throw error(kKind, 2, "NotReductionBlock", block_operand,
                  fmt::format("iteration variable '{}' is {}, not spatial or reduce", iv.var.name(),
                              iter_kind_name(iv.kind)),
                  at_block);
    }
  }
  // The init runs once per element: it may not depend on where the reduction is.
  std::unordered_map<const VarNode*, Expr> zero_reduce;
  for (const VarNode* v : reduce_vars) zero_reduce[v] = make_zero(v->dtype);
  if (!detail::substitute_vars(block->init, zero_reduce).same_as(block->init)) {
    throw error(kKind, 2, "NotReductionBlock", block_operand, "the init uses a reduce iteration variable", at_block);
  }
  for (size_t p = 0; p < top; ++p) {
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i].kind == IterKind::kReduce &&
          detail::uses_any_var(realize->iter_values[i], {loops[p]->loop_var.get()})) {
        throw error(kKind, 3, "LoopBelowReduceLoop", loop_operand,
                    fmt::format("loop '{}' above it feeds reduce iteration variable '{}'", loops[p]->loop_var.name(),
                                block->iter_vars[i].var.name()),
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
  if (!detail::dropped_guards_hold(realize->predicate, dropped, detail::analyzer_for(path))) {
    throw error(kKind, 4, "UnsupportedPredicate", block_operand,
                fmt::format("the predicate {} of block '{}' may fail where the reduction starts, so the init block "
                            "would run for elements the init did not",
                            print_expr(realize->predicate), block->name),
                at_block);
  }

  const std::string init_name = detail::fresh_block_name(func_, block->name + "_init");
  Stmt init_nest = make_init_nest(realize, loops, top, init_name);
  Stmt updated = detail::replace_stmt(Stmt(loop), block, make_update(block));
  PrimFunc func = detail::replace_in_func(func_, loop, SeqStmtNode::make({init_nest, updated}));

  BlockRV out = new_block_rv(init_name);
  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(block_rv);
  inst.inputs.emplace_back(loop_rv);
  inst.outputs.push_back(out);
  commit(std::move(func), std::move(inst));
  return out;
}

namespace detail {

std::vector<RandomVar> apply_decompose_reduction(Schedule& sch, const std::vector<Arg>& inputs,
                                                 const std::vector<Arg>& attrs, const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::DecomposeReduction;
  expect_count(kKind, "inputs", inputs, 2);
  expect_count(kKind, "attrs", attrs, 0);
  return {sch.decompose_reduction(block_arg(kKind, inputs[0]), loop_arg(kKind, inputs[1]))};
}

}  // namespace detail
}  // namespace dragon::schedule
