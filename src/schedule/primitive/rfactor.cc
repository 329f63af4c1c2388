// rfactor: a reduction over a loop becomes partial reductions into an intermediate
// buffer with one more dimension (the rfactor block) and a write-back block that
// combines the partials. Reassociates the reduction: float results change by rounding.
#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "dragon/ir/block_access.h"
#include "dragon/ir/combiner.h"
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
struct RFactorPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Factors the reduction over `loop` out: the rfactor block (named <block>_rf, fresh)
  // accumulates partial results, one per iteration of `loop`, into a new buffer of the
  // same name with an extra dimension at factor_axis (negative counts from the end, as
  // in Python); the write-back block (the old block's name, same init) combines them
  // into the old buffer under copies of the loops feeding it. The update must read
  // `C = C + x`, `C * x`, `max(C, x)` or `min(C, x)`. When no other loop feeds a reduce
  // variable, each partial is one value and the rfactor block a plain store without init.
  // Returns the rfactor block.
  // Requires:
  //   1) the loop is serial, starts at 0 and has a constant extent (UnsupportedLoop)
  //   2) exactly one block lies under the loop; it has an init and spatial or reduce
  //      iteration variables only (NotReductionBlock)
  //   3) its update is one store C[I] = C[I] op x, op one of +, *, max, min, x not
  //      reading C, and its init one store to C[I] (UnrecognizedReducer)
  //   4) the loop feeds reduce iteration variables only (one, or several when it was
  //      fused from several reduce loops: each partial then covers a run of the fused
  //      iteration space), and every loop feeding a reduce variable feeds no spatial one
  //      and has bounds free of other loops; the block's predicate holds where the other reduce loops start, so every
  //      partial is initialized (InvalidRFactorLoop)
  //   5) the outermost loop above the block in its scope holds no other block
  //      (NotSingleBlockNest)
  //   6) factor_axis is in [-(rank + 1), rank] for the reduced buffer's rank
  //      (InvalidFactorAxis).
  BlockRV rfactor(LoopRV loop, int64_t factor_axis = 0);
  CheckResult check_rfactor(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::RFactorPlan> plan_rfactor(LoopRV loop, std::optional<int64_t> factor_axis) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The recognised update `C[I] = C[I] op x` (either operand order).
struct Reducer {
  const BufferStoreNode* store = nullptr;
  Combiner combiner = Combiner::kAdd;
  Expr rhs;  // x
};

bool is_self_load(const Expr& e, const BufferStoreNode* store) {
  const auto* load = e.as<BufferLoadNode>();
  if (load == nullptr || !load->buffer.same_as(store->buffer) || load->indices.size() != store->indices.size()) {
    return false;
  }
  for (size_t i = 0; i < load->indices.size(); ++i) {
    if (!structural_equal(load->indices[i], store->indices[i])) return false;
  }
  return true;
}

// The reducer of `block`, or a reason it has none.
std::variant<Reducer, std::string> match_reducer(const BlockNode* block) {
  const auto* store = block->body.as<BufferStoreNode>();
  if (store == nullptr) return std::string("the update is not a single store");
  const auto* init = block->init.as<BufferStoreNode>();
  if (init == nullptr || !init->buffer.same_as(store->buffer) || init->indices.size() != store->indices.size()) {
    return std::string("the init is not a single store to the updated buffer");
  }
  for (size_t i = 0; i < init->indices.size(); ++i) {
    if (!structural_equal(init->indices[i], store->indices[i])) {
      return std::string("the init stores at other indices than the update");
    }
  }
  Reducer r;
  r.store = store;
  std::optional<Combination> combination = as_combination(store->value);
  if (!combination) return std::string("the update is not C = C + x, C * x, max(C, x) or min(C, x)");
  r.combiner = combination->combiner;
  const Expr& a = combination->a;
  const Expr& b = combination->b;
  if (is_self_load(a, store)) r.rhs = b;
  else if (is_self_load(b, store)) r.rhs = a;
  else return std::string("neither operand of the update is the stored element");
  if (ir::loads_buffer(r.rhs, store->buffer.get())) return std::string("the combined value reads the reduced buffer again");
  return r;
}

// `indices` with `index` inserted at `axis`.
std::vector<Expr> insert_at(std::vector<Expr> indices, int64_t axis, Expr index) {
  indices.insert(indices.begin() + axis, std::move(index));
  return indices;
}

// The first variable `e` uses that is not among `allowed` (nullptr when there is none).
class VarOutsideFinder : public ExprVisitor {
 public:
  explicit VarOutsideFinder(const std::vector<const VarNode*>& allowed) : allowed_(allowed) {}
  const VarNode* found = nullptr;

 protected:
  void visit_(const VarNode* op) override {
    if (found == nullptr && std::find(allowed_.begin(), allowed_.end(), op) == allowed_.end()) found = op;
  }
  using ExprVisitor::visit_;

 private:
  const std::vector<const VarNode*>& allowed_;
};

}  // namespace

// What rfactor's construction needs, once its preconditions hold.
struct detail::RFactorPlan {
  const ForNode* loop = nullptr;
  int64_t extent = 0;
  const BlockRealizeNode* realize = nullptr;
  Reducer reducer;
  std::vector<const ForNode*> loops;         // above the block in its scope, outermost first
  std::vector<const ForNode*> reduce_loops;  // those feeding reduce variables
};

detail::Planned<detail::RFactorPlan> Schedule::plan_rfactor(LoopRV loop_rv, std::optional<int64_t> factor_axis) const {
  constexpr InstructionKind kKind = InstructionKind::RFactor;
  auto found = find(loop_rv, kKind, "loop");
  if (!found.ok()) return std::move(found).take_error();
  const ForNode* loop = *found;
  auto operand = [&] { return fmt::format("loop {}", rv_name(loop_rv)); };
  const ErrorLocus here{loop->loop_var.get(), {}};
  std::optional<int64_t> extent = as_const_int(loop->extent);
  if (loop->for_kind != ForKind::kSerial || !is_const_int(loop->min, 0) || !extent) {
    return error(
        kKind, 1, "UnsupportedLoop", operand,
        [&] {
          return fmt::format("the loop is {} over {} +: {}; rfactor needs a serial loop from 0 with a constant extent",
                             for_kind_name(loop->for_kind), print_expr(loop->min), print_expr(loop->extent));
        },
        here);
  }
  std::vector<const BlockRealizeNode*> children = detail::child_block_realizes(loop->body);
  if (children.size() != 1) {
    return error(
        kKind, 2, "NotReductionBlock", operand,
        [&] { return fmt::format("{} blocks lie under the loop, rfactor needs exactly one", children.size()); }, here);
  }
  const BlockRealizeNode* realize = children[0];
  const BlockNode* block = realize->block.get();
  const ErrorLocus at_block{nullptr, block->name};
  if (!block->init.defined()) {
    return error(
        kKind, 2, "NotReductionBlock", operand, [&] { return fmt::format("block '{}' has no init", block->name); },
        at_block);
  }
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::kSpatial && iv.kind != IterKind::kReduce) {
      return error(
          kKind, 2, "NotReductionBlock", operand,
          [&] {
            return fmt::format("iteration variable '{}' of block '{}' is {}", iv.var.name(), block->name,
                               iter_kind_name(iv.kind));
          },
          at_block);
    }
  }
  auto matched = match_reducer(block);
  if (const auto* reason = std::get_if<std::string>(&matched)) {
    return error(
        kKind, 3, "UnrecognizedReducer", operand, [&] { return fmt::format("block '{}': {}", block->name, *reason); },
        at_block);
  }
  detail::RFactorPlan plan;
  plan.loop = loop;
  plan.extent = *extent;
  plan.realize = realize;
  plan.reducer = std::get<Reducer>(matched);
  const std::span<const ForNode* const> scope_loops = tree_->find(block)->scope_loops();
  std::vector<const ForNode*>& loops = plan.loops;
  loops.assign(scope_loops.begin(), scope_loops.end());
  // Which iteration variables each loop feeds.
  auto feeds = [&](const ForNode* l, IterKind kind) {
    int n = 0;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if ((kind == block->iter_vars[i].kind) && detail::uses_any_var(realize->iter_values[i], {l->loop_var.get()})) ++n;
    }
    return n;
  };
  // A loop feeding several reduce variables (a fused one) partitions the iteration space
  // all the same: partial g sums the iterations with the loop at g, each term once.
  if (feeds(loop, IterKind::kReduce) == 0 || feeds(loop, IterKind::kSpatial) != 0) {
    return error(
        kKind, 4, "InvalidRFactorLoop", operand,
        [&] {
          return fmt::format(
              "the loop feeds {} reduce and {} spatial iteration variables of block '{}'; rfactor "
              "needs reduce ones only",
              feeds(loop, IterKind::kReduce), feeds(loop, IterKind::kSpatial), block->name);
        },
        here);
  }
  std::vector<const VarNode*> loop_vars;
  for (const ForNode* l : loops) loop_vars.push_back(l->loop_var.get());
  for (const ForNode* l : loops) {
    if (feeds(l, IterKind::kReduce) == 0) continue;
    if (feeds(l, IterKind::kSpatial) != 0 || detail::uses_any_var(l->min, loop_vars) ||
        detail::uses_any_var(l->extent, loop_vars)) {
      return error(
          kKind, 4, "InvalidRFactorLoop", operand,
          [&] {
            return fmt::format("loop '{}' feeds a reduce iteration variable and {}", l->loop_var.name(),
                               feeds(l, IterKind::kSpatial) != 0 ? "a spatial one" : "has bounds that use other loops");
          },
          ErrorLocus{l->loop_var.get(), {}});
    }
    plan.reduce_loops.push_back(l);
  }
  // The rfactor block carries the reduce bindings into its body: they may use only the
  // loops of the block's scope, whose variables become its own. A variable from outside
  // the scope (an enclosing block's iteration variable, as after blockize) would be free
  // in the new block.
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i].kind != IterKind::kReduce) continue;
    VarOutsideFinder outside(loop_vars);
    outside.visit(realize->iter_values[i]);
    if (outside.found != nullptr) {
      const std::string var_name = outside.found->name;
      return error(
          kKind, 4, "InvalidRFactorLoop", operand,
          [&, var_name] {
            return fmt::format(
                "reduce iteration variable '{}' of block '{}' is bound to {}, which uses '{}' from outside the "
                "loops of its scope; rfactor needs reduce bindings over those loops only",
                block->iter_vars[i].var.name(), block->name, print_expr(realize->iter_values[i]), var_name);
          },
          at_block);
    }
  }
  const ForNode* top = loops.front();
  if (detail::child_block_realizes(Stmt(top)).size() != 1) {
    return error(
        kKind, 5, "NotSingleBlockNest", operand,
        [&] {
          return fmt::format("loop '{}', the outermost above block '{}', holds other blocks too", top->loop_var.name(),
                             block->name);
        },
        ErrorLocus{top->loop_var.get(), {}});
  }
  std::vector<const ForNode*> others;  // reduce loops besides `loop`: a partial starts where they do
  for (const ForNode* l : plan.reduce_loops) {
    if (l != loop) others.push_back(l);
  }
  Analyzer analyzer;
  for (const ForNode* l : loops) analyzer.bind(l->loop_var, Range{l->min, l->extent});
  if (!detail::dropped_guards_hold(realize->predicate, others, analyzer)) {
    return error(
        kKind, 4, "InvalidRFactorLoop", operand,
        [&] {
          return fmt::format(
              "the predicate {} of block '{}' may fail where the other reduce loops start, leaving a "
              "partial result never initialized",
              print_expr(realize->predicate), block->name);
        },
        here);
  }
  const Buffer& buffer = plan.reducer.store->buffer;
  const int64_t ndim = buffer.ndim();
  if (factor_axis && (*factor_axis < -(ndim + 1) || *factor_axis > ndim)) {
    return error(
        kKind, 6, "InvalidFactorAxis", "factor_axis",
        [&] {
          return fmt::format("factor_axis {} is not in [{}, {}] for buffer '{}' of rank {}", *factor_axis, -(ndim + 1),
                             ndim, buffer->name, ndim);
        },
        here);
  }
  return plan;
}

BlockRV Schedule::rfactor(LoopRV loop_rv, int64_t factor_axis) {
  constexpr InstructionKind kKind = InstructionKind::RFactor;
  const detail::RFactorPlan plan = plan_rfactor(loop_rv, factor_axis).take();
  const ForNode* loop = plan.loop;
  const BlockRealizeNode* realize = plan.realize;
  const BlockNode* block = realize->block.get();
  const Reducer& reducer = plan.reducer;
  const std::vector<const ForNode*>& loops = plan.loops;
  const std::vector<const ForNode*>& reduce_loops = plan.reduce_loops;
  const ForNode* top = loops.front();
  const std::optional<int64_t> extent = plan.extent;
  const Buffer& buffer = reducer.store->buffer;
  const int64_t ndim = buffer.ndim();
  const int64_t axis = factor_axis < 0 ? factor_axis + ndim + 1 : factor_axis;

  // The intermediate buffer, allocated in the scope block.
  const std::string rf_name = detail::fresh_block_name(func_, block->name + "_rf");
  std::vector<int64_t> shape = buffer->shape;
  shape.insert(shape.begin() + axis, *extent);
  Buffer rf_buffer = Buffer::make(rf_name, buffer->dtype, shape, buffer->scope);

  // The rfactor block: spatial variables (copies), the rfactor loop's variable (spatial),
  // one reduce variable per other loop feeding a reduction; the old reduce variables
  // become their bindings over these.
  std::vector<IterVar> rf_iters;
  std::vector<Expr> rf_values;
  std::unordered_map<const VarNode*, Expr> block_map;
  std::unordered_map<const VarNode*, Expr> loop_to_iter;
  Var rf_var("v" + loop->loop_var.name(), loop->loop_var.dtype());
  rf_iters.push_back(IterVar{rf_var, Range{loop->min, loop->extent}, IterKind::kSpatial});
  rf_values.push_back(loop->loop_var);
  loop_to_iter[loop->loop_var.get()] = rf_var;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind != IterKind::kSpatial) continue;
    Var v(iv.var.name(), iv.var.dtype());
    rf_iters.push_back(IterVar{v, iv.dom, iv.kind});
    rf_values.push_back(realize->iter_values[i]);
    block_map[iv.var.get()] = v;
  }
  for (const ForNode* l : reduce_loops) {
    if (l == loop) continue;
    Var v("v" + l->loop_var.name(), l->loop_var.dtype());
    rf_iters.push_back(IterVar{v, Range{l->min, l->extent}, IterKind::kReduce});
    rf_values.push_back(l->loop_var);
    loop_to_iter[l->loop_var.get()] = v;
  }
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind == IterKind::kReduce) {
      block_map[iv.var.get()] = detail::substitute_vars(realize->iter_values[i], loop_to_iter);
    }
  }
  std::vector<Expr> rf_indices;
  for (const Expr& e : reducer.store->indices) rf_indices.push_back(detail::substitute_vars(e, block_map));
  rf_indices = insert_at(rf_indices, axis, rf_var);
  // With no other reduce loop each partial is one value: a plain store, no init.
  Expr rhs = detail::substitute_vars(reducer.rhs, block_map);
  const bool partial_reduces = rf_iters.back().kind == IterKind::kReduce;
  Stmt rf_body = BufferStoreNode::make(
      rf_buffer, partial_reduces ? combine(reducer.combiner, BufferLoadNode::make(rf_buffer, rf_indices), rhs) : rhs,
      rf_indices);
  Stmt rf_init =
      partial_reduces ? BufferStoreNode::make(rf_buffer, combiner_identity(reducer.combiner, buffer->dtype), rf_indices) : Stmt();
  BlockAccessRegions rf_access = detect_block_access_regions(rf_body, rf_init);
  Block rf_block = BlockNode::make(rf_name, rf_iters, rf_access.reads, rf_access.writes, rf_body, rf_init, {},
                                   block->annotations);
  Stmt rf_nest = detail::replace_stmt(Stmt(top), realize,
                                      BlockRealizeNode::make(rf_values, realize->predicate, rf_block));

  // The write-back block: the old spatial variables and one reduce variable over the
  // partials, under copies of the loops that feed them.
  std::vector<IterVar> wb_iters;
  std::vector<Expr> wb_values;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i].kind != IterKind::kSpatial) continue;
    wb_iters.push_back(block->iter_vars[i]);
    wb_values.push_back(realize->iter_values[i]);
  }
  Var wb_var("v" + loop->loop_var.name(), loop->loop_var.dtype());
  wb_iters.push_back(IterVar{wb_var, Range{loop->min, loop->extent}, IterKind::kReduce});
  wb_values.push_back(loop->loop_var);
  std::vector<Expr> wb_rf_indices = insert_at(reducer.store->indices, axis, wb_var);
  Stmt wb_body = BufferStoreNode::make(
      buffer, combine(reducer.combiner, BufferLoadNode::make(buffer, reducer.store->indices),
                      BufferLoadNode::make(rf_buffer, wb_rf_indices)),
      reducer.store->indices);
  BlockAccessRegions wb_access = detect_block_access_regions(wb_body, block->init);
  Block wb_block = BlockNode::make(block->name, wb_iters, wb_access.reads, wb_access.writes, wb_body, block->init, {},
                                   block->annotations);
  std::vector<const ForNode*> kept;
  std::vector<const VarNode*> dropped;
  for (const ForNode* l : loops) {
    bool used = l == loop;
    for (const Expr& v : wb_values) used |= detail::uses_any_var(v, {l->loop_var.get()});
    if (used) kept.push_back(l);
    else dropped.push_back(l->loop_var.get());
  }
  Stmt wb_nest = BlockRealizeNode::make(wb_values, detail::kept_conjuncts(realize->predicate, dropped), wb_block);
  std::unordered_map<const VarNode*, Expr> loop_map;
  for (size_t p = kept.size(); p-- > 0;) {
    const ForNode* l = kept[p];
    Var v(l->loop_var.name(), l->loop_var.dtype());
    loop_map[l->loop_var.get()] = v;
    wb_nest = ForNode::make(v, l->min, l->extent, l->for_kind, wb_nest, l->thread_tag);
  }
  wb_nest = detail::substitute_vars(wb_nest, loop_map);

  const BlockNode* scope = tree_->find(block)->scope;
  Stmt scope_body = detail::replace_stmt(scope->body, top, SeqStmtNode::make({rf_nest, wb_nest}));
  std::vector<Buffer> allocs = scope->alloc_buffers;
  allocs.push_back(rf_buffer);
  Block new_scope = BlockNode::make(scope->name, scope->iter_vars, scope->reads, scope->writes, scope_body,
                                    scope->init, allocs, scope->annotations);
  PrimFunc func = detail::replace_in_func(func_, scope, new_scope);

  BlockRV out = new_block_rv(rf_name);
  commit(std::move(func), detail::make_instruction(kKind, {out}, loop_rv, factor_axis));
  return out;
}

CheckResult Schedule::check_rfactor(const detail::CheckedOperands& ops) const {
  ops.expect(1, 1);
  auto loop = ops.loop(0);
  auto factor_axis = ops.int_attr(0);
  if (!loop) return detail::unknown();
  return detail::verdict(plan_rfactor(*loop, factor_axis), factor_axis.has_value(), 1);
}

namespace detail {

constexpr auto kRFactorSlots = numbered_slots({
    slot::input("loop", ValueType::kLoop),
    slot::attr("factor_axis", ValueType::kInt).defaults_to(int64_t{0}),
});

constinit const InstructionSignature kRFactorSignature{
    .python_name = "rfactor",
    .slots = kRFactorSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_method<&Schedule::rfactor>,
    .check = check_method<&Schedule::check_rfactor>,
};

}  // namespace detail
}  // namespace dragon::schedule
