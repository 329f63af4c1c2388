// chunk_scan: a scan whose axis is split into chunks runs as three passes, each parallel
// over the chunks: every chunk's total (a reduction), the carry into each chunk (a scan of
// the totals, as long as the number of chunks), and the scan again inside each chunk from
// its carry. A scan with few rows over a long axis otherwise runs in one thread per row:
// fbgemm's lengths -> offsets (DLRM-Bench R11, one row of 212,993) took 1,000 times eager's
// time so. Reassociates the scan: float sums and products change by rounding, integer ones
// (wrapping) and max/min do not.
#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "dragon/ir/block_access.h"
#include "dragon/ir/combiner.h"
#include "dragon/ir/conjuncts.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ir/uses_var.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct ChunkScanPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Runs the scan whose chunks `loop` numbers chunk by chunk in parallel. The scan
  // block's ordered iteration variable v must be bound to a + s * (loop * K + inner),
  // `inner` a loop of extent K and s 1 or -1 (the scan axis split, `loop` outer; a
  // reverse scan's binding runs backwards). Adds before the scan's nest, under copies of
  // its loops:
  //   - <block>_chunk_total: each chunk's terms combined (a reduction over `inner`), one
  //     value per row and chunk in a new buffer of the same name, indexed by the block's
  //     spatial variables and the chunk;
  //   - <block>_chunk_carry: the totals of the chunks before each one combined (an
  //     ordered scan over the chunks from the combiner's identity; no copy of `inner`);
  // and the scan block starts each chunk from its carry: its variable over `loop` is
  // spatial, the one over `inner` ordered. Returns the total block (the carry block is
  // the scan's producer, and the total block's consumer).
  // Requires:
  //   1) the loop is serial, starts at 0 and has a constant extent (UnsupportedLoop)
  //   2) exactly one block lies under the loop; its iteration variables are spatial (of
  //      constant domains) but one ordered, it has no init, and the outermost loop above
  //      it in its scope holds no other block (NotScanBlock)
  //   3) its body is one store Y[I] = select(v == start, first, Y[P] op x): one index of
  //      I uses v, P differs from I in that index only, op is +, *, max or min, and
  //      neither first nor x reads Y (UnrecognizedScan)
  //   4) v is bound as above to `loop` and one other serial loop from 0 of constant
  //      extent, neither feeding another variable, with start = a, and P is where the
  //      loops' previous step stored; the block's predicate holds where `inner` starts,
  //      and its conjuncts over `inner` use no other loop than `loop` (InvalidChunkLoop).
  BlockRV chunk_scan(LoopRV loop);
  CheckResult check_chunk_scan(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::ChunkScanPlan> plan_chunk_scan(LoopRV loop) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The pieces of Y[I] = select(v == start, first, Y[P] op x), or why the block has none.
struct ScanUpdate {
  const BufferStoreNode* store = nullptr;
  size_t axis = 0;          // the index of I that uses v
  int64_t start = 0;
  Expr condition;           // v == start, as written
  Expr first;
  Combiner combiner = Combiner::kAdd;
  Expr previous;            // Y[P]
  Expr previous_index;      // P[axis]
  Expr term;                // x
};

std::variant<ScanUpdate, std::string> match_scan(const BlockNode* block, const Var& var) {
  const VarNode* v = var.get();
  ScanUpdate u;
  u.store = block->body.as<BufferStoreNode>();
  if (u.store == nullptr) return std::string("the body is not a single store");
  const Buffer& y = u.store->buffer;
  bool placed = false;
  for (size_t d = 0; d < u.store->indices.size(); ++d) {
    if (!detail::uses_any_var(u.store->indices[d], {v})) continue;
    if (placed) return fmt::format("the ordered variable '{}' indexes two dimensions of '{}'", v->name, y->name);
    placed = true;
    u.axis = d;
  }
  if (!placed) return fmt::format("the ordered variable '{}' indexes no dimension of '{}'", v->name, y->name);
  const auto* select = u.store->value.as<SelectNode>();
  const auto* eq = select == nullptr ? nullptr : select->condition.as<EQNode>();
  if (eq == nullptr) return std::string("the stored value is not select(v == start, first, previous op x)");
  const Expr& bound = eq->a.get() == v ? eq->b : eq->a;
  if ((eq->a.get() != v && eq->b.get() != v) || !as_const_int(simplify(bound))) {
    return std::string("the select's condition does not compare the ordered variable with a constant");
  }
  u.start = *as_const_int(simplify(bound));
  u.condition = select->condition;
  u.first = select->true_value;
  std::optional<Combination> combination = as_combination(select->false_value);
  if (!combination) return std::string("the value after the start is not previous + x, * x, max(previous, x) or min");
  u.combiner = combination->combiner;
  // Y at I but along the scanned dimension (checked against the loops' step later).
  auto is_previous = [&](const Expr& e) {
    const auto* load = e.as<BufferLoadNode>();
    if (load == nullptr || !load->buffer.same_as(y) || load->indices.size() != u.store->indices.size()) return false;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      if (d != u.axis && !structural_equal(load->indices[d], u.store->indices[d])) return false;
    }
    return true;
  };
  if (is_previous(combination->a)) {
    u.previous = combination->a, u.term = combination->b;
  } else if (is_previous(combination->b)) {
    u.previous = combination->b, u.term = combination->a;
  } else {
    return fmt::format("neither operand after the start reads '{}' along the scanned dimension", y->name);
  }
  u.previous_index = u.previous.as<BufferLoadNode>()->indices[u.axis];
  if (ir::loads_buffer(u.term, y.get())) return fmt::format("the combined term reads '{}' again", y->name);
  if (ir::loads_buffer(u.first, y.get())) return fmt::format("the first value reads '{}'", y->name);
  return u;
}

}  // namespace

// What chunk_scan's construction needs, once its preconditions hold.
struct detail::ChunkScanPlan {
  const ForNode* loop = nullptr;   // over the chunks
  const ForNode* inner = nullptr;  // inside a chunk
  int64_t chunks = 0;
  int64_t chunk = 0;
  const BlockRealizeNode* realize = nullptr;
  size_t ordered = 0;  // the ordered variable's position among the block's
  int64_t base = 0;    // a
  int64_t step = 0;    // s
  ScanUpdate update;
  std::vector<const ForNode*> loops;  // above the block in its scope, outermost first
};

detail::Planned<detail::ChunkScanPlan> Schedule::plan_chunk_scan(LoopRV loop_rv) const {
  constexpr InstructionKind kKind = InstructionKind::ChunkScan;
  auto found = find(loop_rv, kKind, "loop");
  if (!found.ok()) return std::move(found).take_error();
  const ForNode* loop = *found;
  auto operand = [&] { return fmt::format("loop {}", rv_name(loop_rv)); };
  const ErrorLocus here{loop->loop_var.get(), {}};
  auto serial_from_zero = [](const ForNode* l) {
    return l->for_kind == ForKind::kSerial && is_const_int(l->min, 0) && as_const_int(l->extent).has_value();
  };
  if (!serial_from_zero(loop)) {
    return error(
        kKind, 1, "UnsupportedLoop", operand,
        [&] {
          return fmt::format(
              "the loop is {} over {} +: {}; chunk_scan needs a serial loop from 0 with a constant extent",
              for_kind_name(loop->for_kind), print_expr(loop->min), print_expr(loop->extent));
        },
        here);
  }
  std::vector<const BlockRealizeNode*> children = detail::child_block_realizes(loop->body);
  if (children.size() != 1) {
    return error(
        kKind, 2, "NotScanBlock", operand,
        [&] { return fmt::format("{} blocks lie under the loop, chunk_scan needs exactly one", children.size()); },
        here);
  }
  detail::ChunkScanPlan plan;
  plan.loop = loop;
  plan.chunks = *as_const_int(loop->extent);
  plan.realize = children[0];
  const BlockNode* block = plan.realize->block.get();
  const ErrorLocus at_block{nullptr, block->name};
  auto not_scan = [&](std::string why) {
    return error(
        kKind, 2, "NotScanBlock", operand, [&, why] { return fmt::format("block '{}' {}", block->name, why); },
        at_block);
  };
  if (block->init.defined()) return not_scan("has an init: a reduction, not a scan");
  int ordered = 0;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind == IterKind::kOrdered) {
      ++ordered;
      plan.ordered = i;
    } else if (iv.kind != IterKind::kSpatial) {
      return not_scan(fmt::format("has the {} iteration variable '{}'", iter_kind_name(iv.kind), iv.var.name()));
    } else if (!as_const_int(iv.dom.min) || !as_const_int(iv.dom.extent)) {
      return not_scan(fmt::format("has the spatial variable '{}' over a domain of variable bounds", iv.var.name()));
    }
  }
  if (ordered != 1) return not_scan(fmt::format("has {} ordered iteration variables, a scan has one", ordered));
  const std::span<const ForNode* const> scope_loops = tree_->find(block)->scope_loops();
  plan.loops.assign(scope_loops.begin(), scope_loops.end());
  const ForNode* top = plan.loops.front();
  if (detail::child_block_realizes(Stmt(top)).size() != 1) {
    return error(
        kKind, 2, "NotScanBlock", operand,
        [&] {
          return fmt::format("loop '{}', the outermost above block '{}', holds other blocks too",
                             top->loop_var.name(), block->name);
        },
        ErrorLocus{top->loop_var.get(), {}});
  }
  const Var& v = block->iter_vars[plan.ordered].var;
  auto matched = match_scan(block, v);
  if (const auto* reason = std::get_if<std::string>(&matched)) {
    return error(
        kKind, 3, "UnrecognizedScan", operand, [&] { return fmt::format("block '{}': {}", block->name, *reason); },
        at_block);
  }
  plan.update = std::get<ScanUpdate>(matched);

  auto invalid = [&](std::string why) {
    return error(
        kKind, 4, "InvalidChunkLoop", operand,
        [&, why] { return fmt::format("the ordered variable '{}' of block '{}': {}", v.name(), block->name, why); },
        here);
  };
  const Expr& binding = plan.realize->iter_values[plan.ordered];
  std::vector<const ForNode*> feeding;
  for (const ForNode* l : plan.loops) {
    if (detail::uses_any_var(binding, {l->loop_var.get()})) feeding.push_back(l);
  }
  if (std::find(feeding.begin(), feeding.end(), loop) == feeding.end()) {
    return invalid(fmt::format("its binding {} does not use the loop", print_expr(binding)));
  }
  if (feeding.size() != 2) {
    return invalid(fmt::format("its binding {} uses {} loops; chunk_scan needs the loop and one inside a chunk",
                               print_expr(binding), feeding.size()));
  }
  plan.inner = feeding[0] == loop ? feeding[1] : feeding[0];
  const ForNode* inner = plan.inner;
  if (!serial_from_zero(inner)) {
    return invalid(fmt::format("loop '{}' is {} over {} +: {}, not serial from 0 with a constant extent",
                               inner->loop_var.name(), for_kind_name(inner->for_kind), print_expr(inner->min),
                               print_expr(inner->extent)));
  }
  plan.chunk = *as_const_int(inner->extent);
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (i == plan.ordered) continue;
    if (detail::uses_any_var(plan.realize->iter_values[i], {loop->loop_var.get(), inner->loop_var.get()})) {
      return invalid(fmt::format("its loops also feed '{}'", block->iter_vars[i].var.name()));
    }
  }
  Analyzer analyzer;
  for (const ForNode* l : plan.loops) analyzer.bind(l->loop_var, Range{l->min, l->extent});
  auto at = [&](int64_t c, int64_t j) {
    VarMap m{{loop->loop_var.get(), make_const(loop->loop_var.dtype(), static_cast<double>(c))},
             {inner->loop_var.get(), make_const(inner->loop_var.dtype(), static_cast<double>(j))}};
    return as_const_int(analyzer.simplify(detail::substitute_vars(binding, m)));
  };
  std::optional<int64_t> base = at(0, 0), next = plan.chunk > 1 ? at(0, 1) : at(1, 0);
  if (!base || !next || (*next - *base != 1 && *next - *base != -1)) {
    return invalid(fmt::format("its binding {} does not step by 1 or -1 along the loops", print_expr(binding)));
  }
  plan.base = *base;
  plan.step = *next - *base;
  const DataType type = binding.dtype();
  const Expr linear = cast(type, loop->loop_var) * make_const(type, static_cast<double>(plan.chunk)) +
                      cast(type, inner->loop_var);
  const Expr expected = make_const(type, static_cast<double>(plan.base)) +
                        make_const(type, static_cast<double>(plan.step)) * linear;
  if (!analyzer.can_prove_equal(binding, expected)) {
    return invalid(fmt::format("its binding {} is not {} (the loop numbering chunks of {})", print_expr(binding),
                               print_expr(simplify(expected)), plan.chunk));
  }
  if (plan.update.start != plan.base) {
    return invalid(fmt::format("the scan starts at {}, but the loops start it at {}", plan.update.start, plan.base));
  }
  // The previous element is the one the loops stored one step before.
  const Expr stored = plan.update.store->indices[plan.update.axis];
  const Expr one_back = detail::substitute_vars(stored, VarMap{{v.get(), v - make_const(v.dtype(), plan.step)}});
  if (!is_const_int(simplify(plan.update.previous_index - one_back), 0)) {
    return invalid(fmt::format("the scan stores at {} and reads {}, not the element the loops stored a step before",
                               print_expr(stored), print_expr(plan.update.previous_index)));
  }
  const Expr& predicate = plan.realize->predicate;
  for (const Expr& conjunct : split_conjuncts(predicate)) {
    if (!detail::uses_any_var(conjunct, {inner->loop_var.get()})) continue;
    for (const ForNode* l : plan.loops) {
      if (l == loop || l == inner || !detail::uses_any_var(conjunct, {l->loop_var.get()})) continue;
      return invalid(fmt::format("the predicate's conjunct {} uses loop '{}' besides the chunk's loops",
                                 print_expr(conjunct), l->loop_var.name()));
    }
  }
  if (!detail::dropped_guards_hold(predicate, {inner}, analyzer)) {
    return invalid(fmt::format("the predicate {} may fail where loop '{}' starts, leaving a chunk without a first "
                               "element",
                               print_expr(predicate), inner->loop_var.name()));
  }
  return plan;
}

BlockRV Schedule::chunk_scan(LoopRV loop_rv) {
  constexpr InstructionKind kKind = InstructionKind::ChunkScan;
  const detail::ChunkScanPlan plan = plan_chunk_scan(loop_rv).take();
  const ForNode* loop = plan.loop;
  const ForNode* inner = plan.inner;
  const BlockRealizeNode* realize = plan.realize;
  const BlockNode* block = realize->block.get();
  const ScanUpdate& u = plan.update;
  const Buffer& y = u.store->buffer;
  const ForNode* top = plan.loops.front();
  const Var& v = block->iter_vars[plan.ordered].var;
  const DataType index_type = v.dtype();
  auto constant = [&](int64_t value) { return make_const(index_type, static_cast<double>(value)); };

  // The totals and carries: one per row (a value of the spatial variables, in their
  // order) and chunk (last).
  std::vector<int64_t> shape;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (i != plan.ordered) shape.push_back(*as_const_int(block->iter_vars[i].dom.extent));
  }
  shape.push_back(plan.chunks);
  const std::string total_name = detail::fresh_block_name(func_, block->name + "_chunk_total");
  Buffer totals = Buffer::make(total_name, y->dtype, shape, y->scope);
  const std::string carry_name = detail::fresh_block_name(func_, block->name + "_chunk_carry");
  Buffer carries = Buffer::make(carry_name, y->dtype, shape, y->scope);
  const Expr identity = combiner_identity(u.combiner, y->dtype);
  auto at_chunk = [&](const VarMap& spatial, const Expr& chunk) {
    std::vector<Expr> indices;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (i == plan.ordered) continue;
      const IterVar& iv = block->iter_vars[i];
      auto copy = spatial.find(iv.var.get());
      const Expr var = copy == spatial.end() ? Expr(iv.var) : copy->second;
      indices.push_back(is_const_int(iv.dom.min, 0) ? var : var - iv.dom.min);
    }
    indices.push_back(chunk);
    return indices;
  };
  // v over the chunk's variables: a + s * (chunk * K + position).
  auto scan_position = [&](const Expr& chunk, const Expr& position) {
    return constant(plan.base) + constant(plan.step) * (chunk * constant(plan.chunk) + position);
  };

  // A nest of copies of `kept` (fresh loop variables) around the realization `make`
  // builds from the copies' variables.
  auto copied_nest = [&](const std::vector<const ForNode*>& kept, const std::function<Stmt(const VarMap&)>& make) {
    VarMap loop_map;
    std::vector<Var> copies;
    for (const ForNode* l : kept) {
      copies.emplace_back(l->loop_var.name(), l->loop_var.dtype());
      loop_map[l->loop_var.get()] = copies.back();
    }
    Stmt nest = make(loop_map);
    for (size_t p = kept.size(); p-- > 0;) {
      const ForNode* l = kept[p];
      nest = ForNode::make(copies[p], detail::substitute_vars(l->min, loop_map),
                           detail::substitute_vars(l->extent, loop_map), l->for_kind, nest, l->thread_tag);
    }
    return nest;
  };
  // Fresh copies of the block's spatial variables, their bindings over `loop_map`.
  struct Spatial {
    std::vector<IterVar> iters;
    std::vector<Expr> values;
    VarMap map;  // old block variable -> copy
  };
  auto spatial_copies = [&](const VarMap& loop_map) {
    Spatial s;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      if (i == plan.ordered) continue;
      Var copy(iv.var.name(), iv.var.dtype());
      s.iters.push_back(IterVar{copy, iv.dom, IterKind::kSpatial});
      s.values.push_back(detail::substitute_vars(realize->iter_values[i], loop_map));
      s.map[iv.var.get()] = copy;
    }
    return s;
  };
  auto chunk_var = [&](const ForNode* l) { return Var("v" + l->loop_var.name(), index_type); };

  // The block's predicate split: conjuncts over the chunk's loops, the rest.
  std::vector<Expr> in_chunk_conjuncts;
  for (const Expr& conjunct : split_conjuncts(realize->predicate)) {
    if (detail::uses_any_var(conjunct, {inner->loop_var.get()})) in_chunk_conjuncts.push_back(conjunct);
  }
  const Expr outside_chunk_guard = detail::kept_conjuncts(realize->predicate, {inner->loop_var.get()});

  // Totals: T[.., c, ..] = T op select(v == start, first, x) over the chunk's positions.
  Stmt total_nest = copied_nest(plan.loops, [&](const VarMap& loop_map) {
    Spatial s = spatial_copies(loop_map);
    Var c = chunk_var(loop), j = chunk_var(inner);
    s.iters.push_back(IterVar{c, Range{constant(0), constant(plan.chunks)}, IterKind::kSpatial});
    s.values.push_back(loop_map.at(loop->loop_var.get()));
    s.iters.push_back(IterVar{j, Range{constant(0), constant(plan.chunk)}, IterKind::kReduce});
    s.values.push_back(loop_map.at(inner->loop_var.get()));
    VarMap body_map = s.map;
    body_map[v.get()] = scan_position(c, j);
    Expr element = select(detail::substitute_vars(u.condition, body_map), detail::substitute_vars(u.first, body_map),
                          detail::substitute_vars(u.term, body_map));
    // The guards of a last, partial chunk (over the chunk's loops only, precondition 4)
    // select the identity instead of guarding the block: a reduction under a predicate on
    // its reduce loop could not be spread over threads.
    if (!in_chunk_conjuncts.empty()) {
      const VarMap chunk_vars{{loop->loop_var.get(), c}, {inner->loop_var.get(), j}};
      element = select(detail::substitute_vars(conjunction(in_chunk_conjuncts), chunk_vars), element, identity);
    }
    const std::vector<Expr> indices = at_chunk(s.map, c);
    Stmt body = BufferStoreNode::make(
        totals, combine(u.combiner, BufferLoadNode::make(totals, indices), element), indices);
    Stmt init = BufferStoreNode::make(totals, identity, indices);
    BlockAccessRegions access = detect_block_access_regions(body, init);
    Block b = BlockNode::make(total_name, s.iters, access.reads, access.writes, body, init, {}, block->annotations);
    return BlockRealizeNode::make(s.values, detail::substitute_vars(outside_chunk_guard, loop_map), b);
  });

  // Carries: C[.., c, ..] = select(c == 0, identity, C[.., c - 1, ..] op T[.., c - 1, ..]).
  std::vector<const ForNode*> carry_loops;
  for (const ForNode* l : plan.loops) {
    if (l != inner) carry_loops.push_back(l);
  }
  Stmt carry_nest = copied_nest(carry_loops, [&](const VarMap& loop_map) {
    Spatial s = spatial_copies(loop_map);
    Var c = chunk_var(loop);
    s.iters.push_back(IterVar{c, Range{constant(0), constant(plan.chunks)}, IterKind::kOrdered});
    s.values.push_back(loop_map.at(loop->loop_var.get()));
    const std::vector<Expr> here = at_chunk(s.map, c), before = at_chunk(s.map, c - constant(1));
    const Expr value = select(eq(c, constant(0)), identity,
                              combine(u.combiner, BufferLoadNode::make(carries, before),
                                              BufferLoadNode::make(totals, before)));
    Stmt body = BufferStoreNode::make(carries, value, here);
    BlockAccessRegions access = detect_block_access_regions(body, Stmt());
    Block b = BlockNode::make(carry_name, s.iters, access.reads, access.writes, body, Stmt(), {}, block->annotations);
    return BlockRealizeNode::make(s.values, detail::substitute_vars(outside_chunk_guard, loop_map), b);
  });

  // The scan itself, chunk by chunk: the first element of a chunk starts from its carry.
  std::vector<IterVar> iters;
  std::vector<Expr> values;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (i == plan.ordered) continue;
    iters.push_back(block->iter_vars[i]);
    values.push_back(realize->iter_values[i]);
  }
  Var c = chunk_var(loop), j = chunk_var(inner);
  iters.push_back(IterVar{c, Range{constant(0), constant(plan.chunks)}, IterKind::kSpatial});
  values.push_back(loop->loop_var);
  iters.push_back(IterVar{j, Range{constant(0), constant(plan.chunk)}, IterKind::kOrdered});
  values.push_back(inner->loop_var);
  const VarMap position{{v.get(), scan_position(c, j)}};
  const Expr term = detail::substitute_vars(u.term, position);
  const Expr element = select(detail::substitute_vars(u.condition, position),
                              detail::substitute_vars(u.first, position), term);
  const Expr carried = BufferLoadNode::make(carries, at_chunk({}, c));
  const Expr value = select(eq(j, constant(0)), combine(u.combiner, carried, element),
                            combine(u.combiner, detail::substitute_vars(u.previous, position), term));
  std::vector<Expr> indices;
  for (const Expr& index : u.store->indices) indices.push_back(detail::substitute_vars(index, position));
  Stmt body = BufferStoreNode::make(y, value, indices);
  BlockAccessRegions access = detect_block_access_regions(body, Stmt());
  Block scan = BlockNode::make(block->name, iters, access.reads, access.writes, body, Stmt(), block->alloc_buffers,
                               block->annotations);
  Stmt scan_nest = detail::replace_stmt(Stmt(top), realize, BlockRealizeNode::make(values, realize->predicate, scan));

  const BlockNode* scope = tree_->find(block)->scope;
  Stmt scope_body = detail::replace_stmt(scope->body, top, SeqStmtNode::make({total_nest, carry_nest, scan_nest}));
  std::vector<Buffer> allocs = scope->alloc_buffers;
  allocs.push_back(totals);
  allocs.push_back(carries);
  Block new_scope = BlockNode::make(scope->name, scope->iter_vars, scope->reads, scope->writes, scope_body,
                                    scope->init, allocs, scope->annotations);
  PrimFunc func = detail::replace_in_func(func_, scope, new_scope);

  BlockRV total_rv = new_block_rv(total_name);
  commit(std::move(func), detail::make_instruction(kKind, {total_rv}, loop_rv));
  return total_rv;
}

CheckResult Schedule::check_chunk_scan(const detail::CheckedOperands& ops) const {
  ops.expect(1, 0);
  auto loop = ops.loop(0);
  if (!loop) return detail::unknown();
  return detail::verdict(plan_chunk_scan(*loop), true, 1);
}

namespace detail {

constexpr auto kChunkScanSlots = numbered_slots({
    slot::input("loop", ValueType::kLoop),
});

constinit const InstructionSignature kChunkScanSignature{
    .python_name = "chunk_scan",
    .slots = kChunkScanSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_method<&Schedule::chunk_scan>,
    .check = check_method<&Schedule::check_chunk_scan>,
};

}  // namespace detail
}  // namespace dragon::schedule
