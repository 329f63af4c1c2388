// blockize: the loops under a given loop and the one block they hold become the body of
// a new outer block whose iteration variables count the tiles the loops cover. The inner
// block keeps its body and init; only its bindings change (to the same values).
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../ir_tree.h"

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

// A binding split into the tile index (outer loops only) and the offset in the tile
// (inner loops only): binding == outer * extent + inner, 0 <= inner < extent.
struct Division {
  Expr outer;
  Expr inner;
  int64_t extent = 1;
};

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
  const int64_t extent = *bound.max + 1;
  const DataType type = binding.dtype();
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

}  // namespace

BlockRV Schedule::blockize(LoopRV loop_rv, bool preserve_unit_iters) {
  constexpr InstructionKind kKind = InstructionKind::Blockize;
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  const std::string operand = fmt::format("loop {}", rv_name(loop_rv));
  const ErrorLocus here{loop->loop_var.get(), {}};

  // 1) a chain of loops down to one block.
  std::vector<const ForNode*> inner_loops{loop};
  const BlockRealizeNode* realize = nullptr;
  for (;;) {
    const Stmt& body = inner_loops.back()->body;
    if (const auto* next = body.as<ForNode>()) {
      inner_loops.push_back(next);
    } else if (const auto* r = body.as<BlockRealizeNode>()) {
      realize = r;
      break;
    } else {
      throw error(kKind, 1, "NotSingleBlockChain", operand,
                  fmt::format("loop '{}' holds a {}, not one loop or one block",
                              inner_loops.back()->loop_var.name(), node_kind_name(body.kind())),
                  ErrorLocus{inner_loops.back()->loop_var.get(), {}});
    }
  }
  const BlockNode* block = realize->block.get();
  for (const ForNode* l : inner_loops) {
    if (!as_const_int(l->min) || !as_const_int(l->extent)) {
      throw error(kKind, 2, "NonConstantExtent", operand,
                  fmt::format("loop '{}' ranges over {} +: {}", l->loop_var.name(), print_expr(l->min),
                              print_expr(l->extent)),
                  ErrorLocus{l->loop_var.get(), {}});
    }
  }
  std::vector<const StmtNode*> path = detail::path_to(func_, realize);
  std::vector<const ForNode*> all_loops = detail::loops_above(path);
  std::vector<const ForNode*> outer_loops(all_loops.begin(),
                                          std::find(all_loops.begin(), all_loops.end(), loop));
  Analyzer analyzer = detail::analyzer_for(path);
  std::vector<const VarNode*> inner_vars, outer_vars;
  for (const ForNode* l : inner_loops) inner_vars.push_back(l->loop_var.get());
  for (const ForNode* l : outer_loops) outer_vars.push_back(l->loop_var.get());

  // 3) each binding is a tile index times the tile extent plus an offset in the tile.
  std::vector<Division> divisions;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    std::optional<Division> d;
    if (is_const_int(iv.dom.min, 0) && as_const_int(iv.dom.extent) && is_quasi_affine(realize->iter_values[i])) {
      d = divide(realize->iter_values[i], outer_loops, inner_loops, analyzer);
    }
    if (!d) {
      throw error(kKind, 3, "NotAffineBinding", operand,
                  fmt::format("the binding {} of '{}' in block '{}' is not a tile index times a tile extent plus an "
                              "offset from the loops under the loop",
                              print_expr(realize->iter_values[i]), iv.var.name(), block->name),
                  ErrorLocus{nullptr, block->name});
    }
    divisions.push_back(*d);
  }
  // 4) the predicate's conjuncts each use outer loops only or inner loops only.
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
  Expr outer_pred = make_bool(true), inner_pred = make_bool(true);
  for (const Expr& c : conjuncts) {
    bool uses_inner = detail::uses_any_var(c, inner_vars), uses_outer = detail::uses_any_var(c, outer_vars);
    if (uses_inner && uses_outer) {
      throw error(kKind, 4, "UnsupportedPredicate", operand,
                  fmt::format("the predicate {} of block '{}' mixes loops above and under the loop",
                              print_expr(c), block->name),
                  ErrorLocus{nullptr, block->name});
    }
    Expr& target = uses_inner ? inner_pred : outer_pred;
    target = is_const_int(target, 1) ? c : target && c;
  }

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
  const std::string name = detail::fresh_block_name(func_, block->name + "_o");
  Block outer = BlockNode::make(name, outer_iters, reads, writes, body);
  Stmt outer_realize = BlockRealizeNode::make(outer_values, outer_pred, outer);

  BlockRV out = new_block_rv(name);
  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(loop_rv);
  inst.attrs.emplace_back(preserve_unit_iters);
  inst.outputs.push_back(out);
  commit(detail::replace_in_func(func_, loop, outer_realize), std::move(inst));
  return out;
}

namespace detail {

std::vector<RandomVar> apply_blockize(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                      const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::Blockize;
  expect_count(kKind, "inputs", inputs, 1);
  expect_count(kKind, "attrs", attrs, 1);
  return {sch.blockize(loop_arg(kKind, inputs[0]), bool_arg(kKind, attrs[0]))};
}

}  // namespace detail
}  // namespace dragon::schedule
