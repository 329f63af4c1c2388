// blockize: the loops under a given loop and the one block they hold become the body of
// a new outer block whose iteration variables count the tiles the loops cover. The inner
// block keeps its body and init; only its bindings change (to the same values).
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"
#include "../plan_memo.h"
#include "blockize_plan.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct BlockizePlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Wraps the loops under `loop` (included) and the block they hold into an outer block
  // (named <block>_o, fresh) whose iteration variables count tiles: each binding of the
  // inner block, outer_index * extent + offset, becomes vo * extent + offset with vo (same
  // kind) bound outside to outer_index. The inner block keeps its body and init; conjuncts
  // of its predicate over the loops above move to the outer block. With
  // preserve_unit_iters false, outer variables of extent 1 are left out. Returns the
  // outer block.
  // Requires:
  //   1) every statement from `loop` down is a loop holding only the next one, down to
  //      one block (NotSingleBlockChain)
  //   2) those loops have constant bounds (NonConstantExtent)
  //   3) each binding of the block is quasi-affine in the loops (+, -, constant
  //      multiples, floordiv/floormod by constants) and splits as outer * e + inner,
  //      outer using only loops above `loop`, inner only loops from `loop` down with
  //      values in [0, e), and the
  //      iteration variable's domain starts at 0 with a constant extent (NotAffineBinding)
  //   4) no conjunct of the block's predicate uses loops both above and from `loop` down
  //      (UnsupportedPredicate).
  BlockRV blockize(LoopRV loop, bool preserve_unit_iters = true);
  CheckResult check_blockize(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::BlockizePlan> plan_blockize(LoopRV loop) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// Whether `e` is quasi-affine in loop variables: sums, differences and constant
// multiples of them and constants, floordiv/floormod by positive constants, casts.
bool is_quasi_affine(const Expr& e) {
  if (e.as<IntImmNode>() || e.as<VarNode>()) return true;
  if (const auto* n = e.as<CastNode>()) return n->value.dtype().is_int() && is_quasi_affine(n->value);
  if (const auto* n = e.as<AddNode>()) return is_quasi_affine(n->a) && is_quasi_affine(n->b);
  if (const auto* n = e.as<SubNode>()) return is_quasi_affine(n->a) && is_quasi_affine(n->b);
  if (const auto* n = e.as<MulNode>()) {
    return (as_const_int(n->a) && is_quasi_affine(n->b)) || (as_const_int(n->b) && is_quasi_affine(n->a));
  }
  auto positive = [](const Expr& d) { return as_const_int(d) && *as_const_int(d) > 0; };
  if (const auto* n = e.as<FloorDivNode>()) return positive(n->b) && is_quasi_affine(n->a);
  if (const auto* n = e.as<FloorModNode>()) return positive(n->b) && is_quasi_affine(n->a);
  return false;
}

using detail::Division;

std::optional<Division> divide(const Expr& binding, const std::vector<const ForNode*>& outer_loops,
                               const std::vector<const ForNode*>& inner_loops, const Analyzer& analyzer) {
  std::unordered_map<const VarNode*, Expr> outer_zero, inner_zero;
  for (const ForNode* l : outer_loops) outer_zero[l->loop_var.get()] = make_zero(l->loop_var.dtype());
  for (const ForNode* l : inner_loops) inner_zero[l->loop_var.get()] = make_zero(l->loop_var.dtype());
  Expr inner = analyzer.simplify(detail::substitute_vars(binding, outer_zero));
  Expr outer_scaled = analyzer.simplify(detail::substitute_vars(binding, inner_zero));
  if (!analyzer.can_prove_equal(binding, outer_scaled + inner)) return std::nullopt;
  ConstIntBound bound = analyzer.const_int_bound(inner);
  if (!bound.min || !bound.max || *bound.min != 0) return std::nullopt;
  const DataType type = binding.dtype();
  // An offset bounded only by its type (an inner loop var the analyzer knows no range of)
  // is no tile: its extent would not even be a constant of that type.
  if (*bound.max >= int_max_value(type)) return std::nullopt;
  const int64_t extent = *bound.max + 1;
  Expr outer = extent == 1 ? outer_scaled : analyzer.simplify(floordiv(outer_scaled, make_const(type, extent)));
  if (extent != 1 && !analyzer.can_prove_equal(outer * make_const(type, extent), outer_scaled)) return std::nullopt;
  return Division{outer, inner, extent};
}

// `region` of the inner block, its variables replaced by `subst`, widened over the
// inner loops (whole dimensions where the offset is not bounded).
BufferRegion relax(const BufferRegion& region, const std::unordered_map<const VarNode*, Expr>& subst,
                   const std::vector<const ForNode*>& inner_loops, const Analyzer& analyzer) {
  std::unordered_map<const VarNode*, Expr> inner_zero;
  for (const ForNode* l : inner_loops) inner_zero[l->loop_var.get()] = make_zero(l->loop_var.dtype());
  std::vector<Range> ranges;
  for (size_t d = 0; d < region.region.size(); ++d) {
    const Range& r = region.region[d];
    Expr min = analyzer.simplify(detail::substitute_vars(r.min, subst));
    Expr base = analyzer.simplify(detail::substitute_vars(min, inner_zero));
    ConstIntBound offset = analyzer.const_int_bound(analyzer.simplify(min - base));
    auto extent = as_const_int(r.extent);
    if (offset.min && offset.max && extent) {
      DataType type = min.dtype();
      ranges.push_back(Range{analyzer.simplify(base + make_const(type, *offset.min)),
                             make_const(type, *offset.max - *offset.min + *extent)});
    } else {
      DataType type = r.min.dtype();
      ranges.push_back(Range{make_zero(type), make_const(type, region.buffer->shape[d])});
    }
  }
  return BufferRegion{region.buffer, ranges};
}

// Blockize's preconditions 3 and 4 for the block `realize` under the loops `inner` (the
// given loop down to it), with the loops of its scope above them `outer`: each binding
// divided into a tile index and an offset, and the predicate's conjuncts split between
// the loops above and those below; or which binding (3) or conjunct (4) fails.
struct Analysis {
  std::vector<Division> divisions;
  Expr outer_pred, inner_pred;
  int failed = 0;  // the precondition that fails, 0 when both hold
  size_t at = 0;   // 3: the binding that is not divided
  Expr mixed;      // 4: the conjunct mixing loops above and below
};

Analysis analyse(const BlockRealizeNode* realize, const std::vector<const ForNode*>& outer_loops,
                 const std::vector<const ForNode*>& inner_loops, std::span<const ForNode* const> scope_loops) {
  const BlockNode* block = realize->block.get();
  Analysis out;
  Analyzer analyzer;
  for (const ForNode* l : scope_loops) analyzer.bind(l->loop_var, Range{l->min, l->extent});
  // 3) each binding is a tile index times the tile extent plus an offset in the tile.
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    std::optional<Division> d;
    if (is_const_int(iv.dom.min, 0) && as_const_int(iv.dom.extent) && is_quasi_affine(realize->iter_values[i])) {
      d = divide(realize->iter_values[i], outer_loops, inner_loops, analyzer);
    }
    if (!d) {
      out.failed = 3;
      out.at = i;
      return out;
    }
    out.divisions.push_back(*d);
  }
  // 4) the predicate's conjuncts each use outer loops only or inner loops only.
  std::vector<const VarNode*> inner_vars, outer_vars;
  for (const ForNode* l : inner_loops) inner_vars.push_back(l->loop_var.get());
  for (const ForNode* l : outer_loops) outer_vars.push_back(l->loop_var.get());
  std::vector<Expr> conjuncts;
  std::vector<Expr> pending{realize->predicate};
  while (!pending.empty()) {
    Expr e = pending.back();
    pending.pop_back();
    if (!e.defined() || is_const_int(e, 1)) continue;
    if (const auto* a = e.as<AndNode>()) {
      pending.push_back(a->b);
      pending.push_back(a->a);
      continue;
    }
    conjuncts.push_back(e);
  }
  out.outer_pred = make_bool(true);
  out.inner_pred = make_bool(true);
  for (const Expr& c : conjuncts) {
    bool uses_inner = detail::uses_any_var(c, inner_vars), uses_outer = detail::uses_any_var(c, outer_vars);
    if (uses_inner && uses_outer) {
      out.failed = 4;
      out.mixed = c;
      return out;
    }
    Expr& target = uses_inner ? out.inner_pred : out.outer_pred;
    target = is_const_int(target, 1) ? c : target && c;
  }
  return out;
}

// Names this analysis in a plan memo.
const char kAnalysisTag = 0;

// The analysis of `realize` with the scope's loops `scope_loops`, those from `top` on
// holding it: remembered in `memo` by the nodes it reads (the loops' variables and
// bounds, the bindings, the predicate, the block's iteration domains).
std::shared_ptr<const Analysis> analysis_of(detail::PlanMemo& memo, const BlockRealizeNode* realize,
                                            std::span<const ForNode* const> scope_loops, size_t top) {
  const BlockNode* block = realize->block.get();
  std::vector<Expr> read;
  for (const ForNode* l : scope_loops) {
    read.push_back(l->loop_var);
    read.push_back(l->min);
    read.push_back(l->extent);
  }
  for (const Expr& value : realize->iter_values) read.push_back(value);
  read.push_back(realize->predicate);
  for (const IterVar& iv : block->iter_vars) {
    read.push_back(iv.var);
    read.push_back(iv.dom.min);
    read.push_back(iv.dom.extent);
  }
  // The counts first (small numbers, never node addresses): keys of different shapes
  // cannot coincide.
  detail::PlanMemo::Key key{&kAnalysisTag, reinterpret_cast<const void*>(scope_loops.size()),
                            reinterpret_cast<const void*>(top), reinterpret_cast<const void*>(realize->iter_values.size())};
  for (const Expr& e : read) key.push_back(e.get());
  if (auto known = memo.find(key)) return std::static_pointer_cast<const Analysis>(known);
  const std::vector<const ForNode*> outer(scope_loops.begin(), scope_loops.begin() + static_cast<std::ptrdiff_t>(top));
  const std::vector<const ForNode*> inner(scope_loops.begin() + static_cast<std::ptrdiff_t>(top), scope_loops.end());
  auto result = std::make_shared<const Analysis>(analyse(realize, outer, inner, scope_loops));
  memo.remember(std::move(key), result, std::move(read));
  return result;
}

}  // namespace

detail::Planned<detail::BlockizePlan> Schedule::plan_blockize(LoopRV loop_rv) const {
  constexpr InstructionKind kKind = InstructionKind::Blockize;
  auto found = find(loop_rv, kKind, "loop");
  if (!found.ok()) return std::move(found).take_error();
  const ForNode* loop = *found;
  auto operand = [&] { return fmt::format("loop {}", rv_name(loop_rv)); };
  detail::BlockizePlan plan;
  // 1) a chain of loops down to one block.
  std::vector<const ForNode*>& inner_loops = plan.inner_loops;
  inner_loops.push_back(loop);
  for (;;) {
    const Stmt& body = inner_loops.back()->body;
    if (const auto* next = body.as<ForNode>()) {
      inner_loops.push_back(next);
    } else if (const auto* r = body.as<BlockRealizeNode>()) {
      plan.realize = r;
      break;
    } else {
      return error(
          kKind, 1, "NotSingleBlockChain", operand,
          [&] {
            return fmt::format("loop '{}' holds a {}, not one loop or one block", inner_loops.back()->loop_var.name(),
                               node_kind_name(body.kind()));
          },
          ErrorLocus{inner_loops.back()->loop_var.get(), {}});
    }
  }
  const BlockRealizeNode* realize = plan.realize;
  const BlockNode* block = realize->block.get();
  for (const ForNode* l : inner_loops) {
    if (!as_const_int(l->min) || !as_const_int(l->extent)) {
      return error(
          kKind, 2, "NonConstantExtent", operand,
          [&] {
            return fmt::format("loop '{}' ranges over {} +: {}", l->loop_var.name(), print_expr(l->min),
                               print_expr(l->extent));
          },
          ErrorLocus{l->loop_var.get(), {}});
    }
  }
  const std::span<const ForNode* const> all_loops = tree_->find(block)->scope_loops();
  const auto top = std::find(all_loops.begin(), all_loops.end(), loop);
  // 3-4) analyse the bindings and the predicate; the result depends on the nodes below
  // only, so it is shared with the schedule's copies that still hold them all.
  const auto analysed = analysis_of(*memo_, realize, all_loops, static_cast<size_t>(top - all_loops.begin()));
  const Analysis& analysis = *analysed;
  if (analysis.failed == 3) {
    const size_t i = analysis.at;
    return error(
        kKind, 3, "NotAffineBinding", operand,
        [&] {
          return fmt::format(
              "the binding {} of '{}' in block '{}' is not a tile index times a tile extent plus an "
              "offset from the loops under the loop",
              print_expr(realize->iter_values[i]), block->iter_vars[i].var.name(), block->name);
        },
        ErrorLocus{nullptr, block->name});
  }
  if (analysis.failed == 4) {
    return error(
        kKind, 4, "UnsupportedPredicate", operand,
        [&] {
          return fmt::format("the predicate {} of block '{}' mixes loops above and under the loop",
                             print_expr(analysis.mixed), block->name);
        },
        ErrorLocus{nullptr, block->name});
  }
  plan.divisions = analysis.divisions;
  plan.outer_pred = analysis.outer_pred;
  plan.inner_pred = analysis.inner_pred;
  return plan;
}

detail::Blockized detail::build_blockized(const PrimFunc& func, const BlockizePlan& plan, bool preserve_unit_iters) {
  const ForNode* loop = plan.inner_loops.front();
  const std::vector<const ForNode*>& inner_loops = plan.inner_loops;
  const BlockRealizeNode* realize = plan.realize;
  const BlockNode* block = realize->block.get();
  const std::vector<Division>& divisions = plan.divisions;
  const Expr& outer_pred = plan.outer_pred;
  const Expr& inner_pred = plan.inner_pred;
  // The outer block's variables and bindings; the inner block's new bindings.
  std::vector<IterVar> outer_iters;
  std::vector<Expr> outer_values, inner_values;
  std::unordered_map<const VarNode*, Expr> inner_subst;  // inner block var -> its value
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    const Division& d = divisions[i];
    const DataType type = iv.var.dtype();
    int64_t tiles = (*as_const_int(iv.dom.extent) + d.extent - 1) / d.extent;
    Expr value;
    if (tiles == 1 && !preserve_unit_iters) {
      value = d.inner;
    } else {
      Var vo(iv.var.name() + "_o", type);
      outer_iters.push_back(IterVar{vo, Range{make_zero(type), make_const(type, tiles)}, iv.kind});
      outer_values.push_back(d.outer);
      value = d.extent == 1 ? Expr(vo) : Expr(vo * make_const(type, d.extent) + d.inner);
    }
    inner_values.push_back(value);
    inner_subst[iv.var.get()] = value;
  }
  Analyzer inner_analyzer;
  for (const IterVar& iv : outer_iters) inner_analyzer.bind(iv.var, iv.dom);
  for (const ForNode* l : inner_loops) inner_analyzer.bind(l->loop_var, Range{l->min, l->extent});
  for (Expr& v : inner_values) v = inner_analyzer.simplify(v);

  std::vector<BufferRegion> reads, writes;
  if (block->init.defined()) {
    // The inner update reads what it writes; outside, that read is no longer its own.
    for (const BufferRegion& w : block->writes) reads.push_back(relax(w, inner_subst, inner_loops, inner_analyzer));
  }
  for (const BufferRegion& r : block->reads) reads.push_back(relax(r, inner_subst, inner_loops, inner_analyzer));
  for (const BufferRegion& w : block->writes) writes.push_back(relax(w, inner_subst, inner_loops, inner_analyzer));

  Stmt body = BlockRealizeNode::make(inner_values, inner_pred, realize->block);
  for (size_t p = inner_loops.size(); p-- > 0;) {
    const ForNode* l = inner_loops[p];
    body = ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, body, l->thread_tag, l->annotations);
  }
  std::string name = detail::fresh_block_name(func, block->name + "_o");
  Block outer = BlockNode::make(name, outer_iters, reads, writes, body);
  Stmt outer_realize = BlockRealizeNode::make(outer_values, outer_pred, outer);
  return Blockized{detail::replace_in_func(func, loop, outer_realize), std::move(name)};
}

BlockRV Schedule::blockize(LoopRV loop_rv, bool preserve_unit_iters) {
  constexpr InstructionKind kKind = InstructionKind::Blockize;
  detail::Blockized blockized = detail::build_blockized(func_, plan_blockize(loop_rv).take(), preserve_unit_iters);
  BlockRV out = new_block_rv(std::move(blockized.outer_name));
  commit(std::move(blockized.func), detail::make_instruction(kKind, {out}, loop_rv, preserve_unit_iters));
  return out;
}

CheckResult Schedule::check_blockize(const detail::CheckedOperands& ops) const {
  ops.expect(1, 1);
  ops.bool_attr(0);  // preserve_unit_iters: only shapes the outer block
  auto loop = ops.loop(0);
  if (!loop) return detail::unknown();
  return detail::verdict(plan_blockize(*loop), true, 1);
}

namespace detail {

constexpr auto kBlockizeSlots = numbered_slots({
    slot::input("target", ValueType::kLoop),
    slot::attr("preserve_unit_iters", ValueType::kBool).defaults_to(true),
});

constinit const InstructionSignature kBlockizeSignature{
    .python_name = "blockize",
    .slots = kBlockizeSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_method<&Schedule::blockize>,
    .check = check_method<&Schedule::check_blockize>,
};

}  // namespace detail
}  // namespace dragon::schedule
