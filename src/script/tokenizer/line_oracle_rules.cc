// The line oracle's exact rules (line_oracle.h, README.md "What keeps a call cheap"):
// checks that decide a trial application without applying it, each mirroring the
// preconditions a primitive checks in src/schedule/primitive/ on the IR as it is.
// Mnemonics known to apply, operands ruled out before a trial, and outcomes decided from
// the operands; test_oracle_shortcuts.cc compares every rule with the trial.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "dragon/ir/buffer_dim_align.h"
#include "dragon/ir/dtype.h"
#include "dragon/ir/function.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "dragon/ir/structural_equal.h"
#include "line_oracle.h"

namespace dragon::script::decoding {

using schedule::Arg;
using schedule::InstructionKind;
using schedule::RandomVar;
using schedule::RVType;

namespace {

class UsesVar : public ir::ExprVisitor {
 public:
  explicit UsesVar(const ir::VarNode* var) : var_(var) {}
  bool found = false;
  void visit_(const ir::VarNode* op) override { found |= op == var_; }

 private:
  const ir::VarNode* var_;
};

bool uses_var(const ir::Expr& e, const ir::VarNode* var) {
  UsesVar v(var);
  v.visit(e);
  return v.found;
}

// Whether the block is complete as compute_inline.cc's incomplete_reason() reads it, in
// the parts that need only the block: spatial iteration variables only and no init.
bool spatial_without_init(const ir::BlockNode* block) {
  if (block->init.defined()) return false;
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind != ir::IterKind::kSpatial) return false;
  }
  return true;
}

// The block realizations directly under a statement (not inside another block), as
// ir_tree.cc's child_block_realizes() finds them; stops at `cap` of them.
class ChildRealizes : public ir::StmtVisitor {
 public:
  explicit ChildRealizes(size_t cap = std::numeric_limits<size_t>::max()) : cap_(cap) {}
  std::vector<const ir::BlockRealizeNode*> found;
  void visit_(const ir::BlockRealizeNode* op) override {
    if (found.size() < cap_) found.push_back(op);
  }

 private:
  size_t cap_;
};

// rfactor.cc's preconditions 1, 2 and 4 on the loop and the block under it: a serial
// loop from 0 with a constant extent, exactly one block below it, with an init and only
// spatial or reduce variables, and the loop feeding exactly one reduce variable and no
// spatial one. False means the primitive rejects the loop.
bool rfactor_loop_possible(const ir::ForNode* loop) {
  if (loop->for_kind != ir::ForKind::kSerial || !ir::is_const_int(loop->min, 0) || !ir::as_const_int(loop->extent))
    return false;
  ChildRealizes children(2);
  children.visit(loop->body);
  if (children.found.size() != 1) return false;
  const ir::BlockRealizeNode* realize = children.found[0];
  const ir::BlockNode* block = realize->block.get();
  if (!block->init.defined()) return false;
  if (realize->iter_values.size() != block->iter_vars.size()) return true;  // malformed: the trial decides
  int reduce = 0, spatial = 0;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const ir::IterKind k = block->iter_vars[i].kind;
    if (k != ir::IterKind::kSpatial && k != ir::IterKind::kReduce) return false;
    if (!uses_var(realize->iter_values[i], loop->loop_var.get())) continue;
    (k == ir::IterKind::kReduce ? reduce : spatial) += 1;
  }
  return reduce == 1 && spatial == 0;
}

// cache_read_write.cc's storage scopes (InvalidScope otherwise).
bool is_storage_scope(std::string_view scope) {
  static const std::set<std::string, std::less<>> kScopes = {
      "global", "shared", "shared.dyn", "local", "warp", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"};
  return kScopes.count(scope) > 0;
}

bool touches(const std::vector<ir::BufferRegion>& regions, const ir::BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(), [&](const ir::BufferRegion& r) { return r.buffer.get() == buffer; });
}

// rfactor.cc's match_reducer (precondition 3): the update is C[I] = C[I] op x for op in
// +, *, max, min (either operand order), x does not read C, and the init is one store to
// C at the same indices.
bool has_recognized_reducer(const ir::BlockNode* block) {
  const auto* store = block->body.as<ir::BufferStoreNode>();
  const auto* init = block->init.as<ir::BufferStoreNode>();
  if (store == nullptr || init == nullptr || !init->buffer.same_as(store->buffer) ||
      init->indices.size() != store->indices.size())
    return false;
  for (size_t i = 0; i < init->indices.size(); ++i) {
    if (!ir::structural_equal(init->indices[i], store->indices[i])) return false;
  }
  ir::Expr a, b;
  if (const auto* n = store->value.as<ir::AddNode>()) a = n->a, b = n->b;
  else if (const auto* n = store->value.as<ir::MulNode>()) a = n->a, b = n->b;
  else if (const auto* n = store->value.as<ir::MaxNode>()) a = n->a, b = n->b;
  else if (const auto* n = store->value.as<ir::MinNode>()) a = n->a, b = n->b;
  else return false;
  auto self_load = [&](const ir::Expr& e) {
    const auto* load = e.as<ir::BufferLoadNode>();
    if (load == nullptr || !load->buffer.same_as(store->buffer) || load->indices.size() != store->indices.size())
      return false;
    for (size_t i = 0; i < load->indices.size(); ++i) {
      if (!ir::structural_equal(load->indices[i], store->indices[i])) return false;
    }
    return true;
  };
  ir::Expr rhs;
  if (self_load(a)) rhs = b;
  else if (self_load(b)) rhs = a;
  else return false;
  class Loads : public ir::ExprVisitor {
   public:
    explicit Loads(const ir::BufferNode* buffer) : buffer_(buffer) {}
    bool found = false;

   protected:
    using ir::ExprVisitor::visit_;
    void visit_(const ir::BufferLoadNode* op) override {
      found |= op->buffer.get() == buffer_;
      ir::ExprVisitor::visit_(op);
    }

   private:
    const ir::BufferNode* buffer_;
  } loads(store->buffer.get());
  loads.visit(rhs);
  return !loads.found;
}

// Whether a conjunct of `predicate` (split at &&) uses one of `loops`' variables: where
// none does, ir_tree.cc's dropped_guards_hold holds without proving anything.
bool conjunct_uses_loops(const ir::Expr& predicate, const std::vector<const ir::ForNode*>& loops) {
  if (!predicate.defined()) return false;
  if (const auto* a = predicate.as<ir::AndNode>()) return conjunct_uses_loops(a->a, loops) || conjunct_uses_loops(a->b, loops);
  return std::any_of(loops.begin(), loops.end(), [&](const ir::ForNode* l) { return uses_var(predicate, l->loop_var.get()); });
}

// blockize.cc's quasi-affine bindings: sums, differences, constant multiples, floordiv
// and floormod by positive constants of loop variables and constants, integer casts.
bool is_quasi_affine(const ir::Expr& e) {
  if (e.as<ir::IntImmNode>() || e.as<ir::VarNode>()) return true;
  if (const auto* n = e.as<ir::CastNode>()) return n->value.dtype().is_int() && is_quasi_affine(n->value);
  if (const auto* n = e.as<ir::AddNode>()) return is_quasi_affine(n->a) && is_quasi_affine(n->b);
  if (const auto* n = e.as<ir::SubNode>()) return is_quasi_affine(n->a) && is_quasi_affine(n->b);
  if (const auto* n = e.as<ir::MulNode>()) {
    return (ir::as_const_int(n->a) && is_quasi_affine(n->b)) || (ir::as_const_int(n->b) && is_quasi_affine(n->a));
  }
  auto positive = [](const ir::Expr& d) { return ir::as_const_int(d) && *ir::as_const_int(d) > 0; };
  if (const auto* n = e.as<ir::FloorDivNode>()) return positive(n->b) && is_quasi_affine(n->a);
  if (const auto* n = e.as<ir::FloorModNode>()) return positive(n->b) && is_quasi_affine(n->a);
  return false;
}

// `e` with the loop variables of `loops` replaced by zeros (as ir_tree.cc's
// substitute_vars does: variables replaced, the rest rebuilt only where changed).
ir::Expr zero_loops(const ir::Expr& e, const std::vector<const ir::ForNode*>& loops) {
  class Zero : public ir::ExprMutator {
   public:
    explicit Zero(const std::vector<const ir::ForNode*>& loops) : loops_(loops) {}
    ir::Expr run(const ir::Expr& e) { return visit(e); }

   protected:
    using ir::ExprMutator::visit_;
    ir::Expr visit_(const ir::VarNode* op) override {
      for (const ir::ForNode* l : loops_) {
        if (l->loop_var.get() == op) return ir::make_zero(l->loop_var.dtype());
      }
      return ir::Expr(op);
    }

   private:
    const std::vector<const ir::ForNode*>& loops_;
  } zero(loops);
  return zero.run(e);
}

// blockize.cc's divide(): whether `binding` is a tile index over `outer` times a tile
// extent plus an offset in [0, extent) over `inner`, as the analyzer proves it.
bool divides_into_tiles(const ir::Expr& binding, const std::vector<const ir::ForNode*>& outer,
                        const std::vector<const ir::ForNode*>& inner, const ir::Analyzer& analyzer) {
  const ir::Expr in_tile = analyzer.simplify(zero_loops(binding, outer));
  const ir::Expr outer_scaled = analyzer.simplify(zero_loops(binding, inner));
  if (!analyzer.can_prove_equal(binding, outer_scaled + in_tile)) return false;
  const ir::ConstIntBound bound = analyzer.const_int_bound(in_tile);
  if (!bound.min || !bound.max || *bound.min != 0) return false;
  const int64_t extent = *bound.max + 1;
  if (extent == 1) return true;
  const ir::DataType type = binding.dtype();
  const ir::Expr tile = analyzer.simplify(ir::floordiv(outer_scaled, ir::make_const(type, static_cast<double>(extent))));
  return analyzer.can_prove_equal(tile * ir::make_const(type, static_cast<double>(extent)), outer_scaled);
}

}  // namespace

std::optional<bool> LineOracle::blockize_outcome(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs) const {
  // blockize.cc, in order: the loop resolves (0); a chain of loops down to one block (1)
  // with constant bounds (2); each binding quasi-affine over an iteration variable from 0
  // with a constant extent, and divided into tiles by the analyzer of the loops above (3);
  // no conjunct of the predicate uses loops both above and under the loop (4). Nothing
  // after these checks fails (regions widen to whole dimensions where unbounded).
  if (inputs.size() != 1 || attrs.size() != 1 || !attrs[0].as<bool>()) return std::nullopt;
  const auto* rv = inputs[0].as<RandomVar>();
  if (rv == nullptr || rv->type != RVType::kLoop) return std::nullopt;
  auto i = script_index(*rv);
  if (!i) return std::nullopt;
  if (!is_valid(RVType::kLoop, *i)) return false;
  const ir::ForNode* loop = loop_at(rv->id);
  std::vector<const ir::ForNode*> inner{loop};
  const ir::BlockRealizeNode* realize = nullptr;
  for (;;) {
    const ir::Stmt& body = inner.back()->body;
    if (const auto* next = body.as<ir::ForNode>()) {
      inner.push_back(next);
    } else if (const auto* r = body.as<ir::BlockRealizeNode>()) {
      realize = r;
      break;
    } else {
      return false;
    }
  }
  for (const ir::ForNode* l : inner) {
    if (!ir::as_const_int(l->min) || !ir::as_const_int(l->extent)) return false;
  }
  const ir::BlockNode* block = realize->block.get();
  auto above = loops_above_.find(block);
  auto in_scope = loops_in_scope_.find(block);
  if (above == loops_above_.end() || in_scope == loops_in_scope_.end()) return std::nullopt;
  if (realize->iter_values.size() != block->iter_vars.size()) return std::nullopt;
  const std::vector<const ir::ForNode*> scope_loops(above->second.end() - static_cast<std::ptrdiff_t>(in_scope->second),
                                                    above->second.end());
  auto at = std::find(scope_loops.begin(), scope_loops.end(), loop);
  if (at == scope_loops.end()) return std::nullopt;
  const std::vector<const ir::ForNode*> outer(scope_loops.begin(), at);
  // From here on the outcome reads only the nodes below (the chain `inner` is the scope's
  // loops from the target down), so it is shared with the other line states that still
  // hold them all.
  std::vector<ir::Expr> read;
  for (const ir::ForNode* l : scope_loops) {
    read.push_back(l->loop_var);
    read.push_back(l->min);
    read.push_back(l->extent);
  }
  for (const ir::Expr& value : realize->iter_values) read.push_back(value);
  read.push_back(realize->predicate);
  for (const ir::IterVar& iv : block->iter_vars) {
    read.push_back(iv.var);
    read.push_back(iv.dom.min);
    read.push_back(iv.dom.extent);
  }
  // The counts first (small numbers, never node addresses), so that keys of different
  // shapes cannot coincide; then the nodes.
  std::vector<const void*> key;
  key.reserve(read.size() + 3);
  for (size_t count : {scope_loops.size(), outer.size(), realize->iter_values.size()}) {
    key.push_back(reinterpret_cast<const void*>(count));
  }
  for (const ir::Expr& e : read) key.push_back(e.get());
  if (blockize_memo_ != nullptr) {
    auto known = blockize_memo_->outcomes.find(key);
    if (known != blockize_memo_->outcomes.end()) return known->second;
  }
  const bool outcome = blockize_analysis_passes(realize, block, outer, inner, scope_loops);
  if (blockize_memo_ != nullptr) {
    blockize_memo_->outcomes.emplace(std::move(key), outcome);
    blockize_memo_->alive.insert(blockize_memo_->alive.end(), read.begin(), read.end());
  }
  return outcome;
}

bool LineOracle::blockize_analysis_passes(const ir::BlockRealizeNode* realize, const ir::BlockNode* block,
                                          const std::vector<const ir::ForNode*>& outer,
                                          const std::vector<const ir::ForNode*>& inner,
                                          const std::vector<const ir::ForNode*>& scope_loops) const {
  ir::Analyzer analyzer;
  for (const ir::ForNode* l : scope_loops) analyzer.bind(l->loop_var, ir::Range{l->min, l->extent});
  for (size_t k = 0; k < block->iter_vars.size(); ++k) {
    const ir::IterVar& iv = block->iter_vars[k];
    if (!ir::is_const_int(iv.dom.min, 0) || !ir::as_const_int(iv.dom.extent) ||
        !is_quasi_affine(realize->iter_values[k]) ||
        !divides_into_tiles(realize->iter_values[k], outer, inner, analyzer))
      return false;
  }
  std::vector<ir::Expr> pending{realize->predicate};
  while (!pending.empty()) {
    const ir::Expr e = pending.back();
    pending.pop_back();
    if (!e.defined() || ir::is_const_int(e, 1)) continue;
    if (const auto* a = e.as<ir::AndNode>()) {
      pending.push_back(a->b);
      pending.push_back(a->a);
      continue;
    }
    auto uses_any = [&](const std::vector<const ir::ForNode*>& loops) {
      return std::any_of(loops.begin(), loops.end(), [&](const ir::ForNode* l) { return uses_var(e, l->loop_var.get()); });
    };
    if (uses_any(inner) && uses_any(outer)) return false;
  }
  return true;
}

std::optional<bool> LineOracle::rfactor_outcome(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs) const {
  // rfactor.cc, in order: the loop resolves (0); serial from 0 with a constant extent (1);
  // one block below, with an init and spatial or reduce variables only (2); a recognised
  // reducer (3); the loop feeds exactly one reduce variable and no spatial one, and every
  // loop of the scope feeding a reduce variable feeds no spatial one and has bounds free
  // of the scope's loops (4); the outermost loop of the scope holds this block alone (5);
  // the predicate holds where the other reduce loops start (4: decided only when no
  // conjunct uses them); factor_axis in [-(ndim + 1), ndim] (6). Nothing after fails.
  if (inputs.size() != 1 || attrs.size() != 1) return std::nullopt;
  const auto* rv = inputs[0].as<RandomVar>();
  const auto* factor_axis = attrs[0].as<int64_t>();
  if (rv == nullptr || rv->type != RVType::kLoop || factor_axis == nullptr) return std::nullopt;
  auto i = script_index(*rv);
  if (!i) return std::nullopt;
  if (!is_valid(RVType::kLoop, *i)) return false;
  const ir::ForNode* loop = loop_at(rv->id);
  if (loop->for_kind != ir::ForKind::kSerial || !ir::is_const_int(loop->min, 0) || !ir::as_const_int(loop->extent))
    return false;
  ChildRealizes children(2);
  children.visit(loop->body);
  if (children.found.size() != 1) return false;
  const ir::BlockRealizeNode* realize = children.found[0];
  const ir::BlockNode* block = realize->block.get();
  if (realize->iter_values.size() != block->iter_vars.size()) return std::nullopt;
  if (!block->init.defined()) return false;
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind != ir::IterKind::kSpatial && iv.kind != ir::IterKind::kReduce) return false;
  }
  if (!has_recognized_reducer(block)) return false;
  auto above = loops_above_.find(block);
  auto in_scope = loops_in_scope_.find(block);
  if (above == loops_above_.end() || in_scope == loops_in_scope_.end()) return std::nullopt;
  const std::vector<const ir::ForNode*> scope_loops(above->second.end() - static_cast<std::ptrdiff_t>(in_scope->second),
                                                    above->second.end());
  auto feeds = [&](const ir::ForNode* l, ir::IterKind kind) {
    int n = 0;
    for (size_t k = 0; k < block->iter_vars.size(); ++k) {
      if (block->iter_vars[k].kind == kind && uses_var(realize->iter_values[k], l->loop_var.get())) ++n;
    }
    return n;
  };
  if (feeds(loop, ir::IterKind::kReduce) != 1 || feeds(loop, ir::IterKind::kSpatial) != 0) return false;
  std::vector<const ir::ForNode*> other_reduce_loops;
  for (const ir::ForNode* l : scope_loops) {
    if (feeds(l, ir::IterKind::kReduce) == 0) continue;
    bool bound_uses_loop = false;
    for (const ir::ForNode* other : scope_loops) {
      bound_uses_loop |= uses_var(l->min, other->loop_var.get()) || uses_var(l->extent, other->loop_var.get());
    }
    if (feeds(l, ir::IterKind::kSpatial) != 0 || bound_uses_loop) return false;
    if (l != loop) other_reduce_loops.push_back(l);
  }
  if (scope_loops.empty()) return std::nullopt;
  ChildRealizes nest(2);
  nest.visit(ir::Stmt(scope_loops.front()));
  if (nest.found.size() != 1) return false;
  if (conjunct_uses_loops(realize->predicate, other_reduce_loops)) return std::nullopt;
  const int64_t ndim = block->body.as<ir::BufferStoreNode>()->buffer.ndim();
  return *factor_axis >= -(ndim + 1) && *factor_axis <= ndim;
}

std::optional<int64_t> LineOracle::expr_value(int64_t id) const {
  auto it = expr_values_.find(id);
  if (it == expr_values_.end()) {
    std::optional<int64_t> value;
    if (state_->sch.is_valid(RandomVar{RVType::kExpr, id})) value = state_->sch.get(schedule::ExprRV{id});
    it = expr_values_.emplace(id, value).first;
  }
  return it->second;
}

bool LineOracle::writes_parameter(const ir::BlockNode* block) const {
  const auto& params = state_->sch.func()->params;
  return block->writes.size() == 1 && std::any_of(params.begin(), params.end(), [&](const ir::Param& p) {
           return p.buffer.get() == block->writes[0].buffer.get();
         });
}

bool LineOracle::encloses(const ir::BlockNode* scope, const ir::BlockNode* block) const {
  for (auto it = parent_block_.find(block); it != parent_block_.end(); it = parent_block_.find(it->second)) {
    if (it->second == scope) return true;
  }
  return false;
}

size_t LineOracle::top_index_in(const ir::BlockNode* scope, const ir::BlockNode* block) const {
  // The ancestor of `block` directly in `scope` (the block itself, or the non-leaf block
  // holding it) sits in the statement recorded for it.
  const ir::BlockNode* child = block;
  while (parent_block_.at(child) != scope) child = parent_block_.at(child);
  return top_index_.at(child);
}

std::optional<bool> LineOracle::cache_read_outcome(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs) const {
  // cache_read_write.cc's Schedule::cache_read, in order: the block and the consumers
  // resolve (0); the index is in range (1); the scope is a storage scope (2); each
  // consumer (the block when none is given) reads the buffer, does not write it, is a
  // leaf and has the block's scope block (3); at most one leaf under the scope writes the
  // buffer, and when one does, each consumer lies in a later top-level statement of the
  // scope (4). Nothing after these checks can fail (blocks are found by their names).
  if (block_in_init_ || !unique_block_names_ || inputs.size() != 2 || attrs.size() != 2) return std::nullopt;
  const auto* list = inputs[1].as<Arg::List>();
  const auto* index = attrs[0].as<int64_t>();
  const auto* storage = attrs[1].as<std::string>();
  if (list == nullptr || index == nullptr || storage == nullptr) return std::nullopt;
  auto block_of = [&](const Arg& a) -> std::optional<const ir::BlockNode*> {
    const auto* rv = a.as<RandomVar>();
    if (rv == nullptr || rv->type != RVType::kBlock) return std::nullopt;
    auto i = script_index(*rv);
    if (!i) return std::nullopt;
    return is_valid(RVType::kBlock, *i) ? block_at(rv->id) : nullptr;
  };
  auto block = block_of(inputs[0]);
  if (!block) return std::nullopt;
  std::vector<const ir::BlockNode*> consumers;
  for (const Arg& c : *list) {
    auto consumer = block_of(c);
    if (!consumer) return std::nullopt;
    consumers.push_back(*consumer);
  }
  if (*block == nullptr) return false;
  for (const ir::BlockNode* c : consumers) {
    if (c == nullptr) return false;
  }
  const ir::BlockNode* b = *block;
  if (*index < 0 || *index >= static_cast<int64_t>(b->reads.size())) return false;
  if (!is_storage_scope(*storage)) return false;
  const ir::BufferNode* buffer = b->reads[*index].buffer.get();
  auto scope = parent_block_.find(b);
  if (scope == parent_block_.end()) return std::nullopt;  // the root: the trial decides
  if (consumers.empty()) consumers.push_back(b);
  for (const ir::BlockNode* c : consumers) {
    auto c_scope = parent_block_.find(c);
    if (!touches(c->reads, buffer) || touches(c->writes, buffer) || non_leaf_blocks_.count(c) > 0 ||
        c_scope == parent_block_.end() || c_scope->second != scope->second)
      return false;
  }
  const ir::BlockNode* writer = nullptr;
  for (const auto& [other, loops] : loops_above_) {
    if (non_leaf_blocks_.count(other) > 0 || !touches(other->writes, buffer) || !encloses(scope->second, other))
      continue;
    if (writer != nullptr) return false;  // NotSingleWriter
    writer = other;
  }
  if (writer != nullptr) {
    const size_t at = top_index_in(scope->second, writer) + 1;
    for (const ir::BlockNode* c : consumers) {
      if (top_index_in(scope->second, c) < at) return false;
    }
  }
  return true;
}

std::optional<bool> LineOracle::cache_write_outcome(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs) const {
  // cache_read_write.cc's Schedule::cache_write, in order: the block resolves (0); the
  // index is in range (1); a storage scope (2); the block is a leaf, no other leaf writes
  // the buffer, and an inout parameter is not also read (3); each dimension written is
  // one iteration variable (extent 1) or a constant range (4); no other leaf of the scope
  // in the block's top-level statement accesses the buffer (5). apply_cache_write takes
  // the block alone or with an empty consumer list.
  if (attrs.size() != 2) return std::nullopt;
  if (inputs.size() == 2) {
    // apply_cache_write rejects a consumer list that is not empty before anything else.
    const auto* list = inputs[1].as<Arg::List>();
    if (list == nullptr || !list->empty()) return false;
  } else if (inputs.size() != 1) {
    return std::nullopt;
  }
  if (block_in_init_ || !unique_block_names_) return std::nullopt;
  const auto* index = attrs[0].as<int64_t>();
  const auto* storage = attrs[1].as<std::string>();
  const auto* rv = inputs[0].as<RandomVar>();
  if (index == nullptr || storage == nullptr || rv == nullptr || rv->type != RVType::kBlock) return std::nullopt;
  auto i = script_index(*rv);
  if (!i) return std::nullopt;
  if (!is_valid(RVType::kBlock, *i)) return false;
  const ir::BlockNode* block = block_at(rv->id);
  if (*index < 0 || *index >= static_cast<int64_t>(block->writes.size())) return false;
  if (!is_storage_scope(*storage)) return false;
  auto scope = parent_block_.find(block);
  if (scope == parent_block_.end()) return std::nullopt;  // the root: the trial decides
  const ir::BufferRegion& written = block->writes[*index];
  const ir::BufferNode* buffer = written.buffer.get();
  if (non_leaf_blocks_.count(block) > 0) return false;
  for (const auto& [other, loops] : loops_above_) {
    if (other != block && non_leaf_blocks_.count(other) == 0 && touches(other->writes, buffer)) return false;
  }
  const auto& params = state_->sch.func()->params;
  const bool in_place = std::any_of(params.begin(), params.end(), [&](const ir::Param& p) {
    return p.buffer.get() == buffer && p.role == ir::ParamRole::kInOut;
  });
  if (in_place && touches(block->reads, buffer)) return false;
  for (const ir::Range& r : written.region) {
    bool iter_var = false;
    for (const ir::IterVar& v : block->iter_vars) iter_var |= v.var.same_as(r.min);
    if (iter_var && ir::is_const_int(r.extent, 1)) continue;
    if (ir::as_const_int(r.min) && ir::as_const_int(r.extent)) continue;
    return false;
  }
  const size_t at = top_index_in(scope->second, block);
  for (const auto& [other, loops] : loops_above_) {
    if (other == block || non_leaf_blocks_.count(other) > 0 || !encloses(scope->second, other)) continue;
    if (top_index_in(scope->second, other) != at) continue;
    if (touches(other->reads, buffer) || touches(other->writes, buffer)) return false;
  }
  return true;
}

std::optional<bool> LineOracle::decompose_reduction_outcome(const std::vector<Arg>& inputs,
                                                            const std::vector<Arg>& attrs) const {
  // decompose_reduction.cc, in order: the block and the loop resolve (0); the loop is
  // among the loops between the block and its scope block (1); the block has an init,
  // only spatial and reduce variables, and an init free of reduce variables (2); no loop
  // above the given one feeds a reduce variable (3); the predicate's conjuncts that use
  // a loop feeding no spatial variable hold where the reduction starts (4: only a
  // predicate without such conjuncts is decided here, else the trial decides).
  if (inputs.size() != 2 || !attrs.empty()) return std::nullopt;
  const auto* block_rv = inputs[0].as<RandomVar>();
  const auto* loop_rv = inputs[1].as<RandomVar>();
  if (block_rv == nullptr || loop_rv == nullptr || block_rv->type != RVType::kBlock || loop_rv->type != RVType::kLoop)
    return std::nullopt;
  auto bi = script_index(*block_rv);
  auto li = script_index(*loop_rv);
  if (!bi || !li) return std::nullopt;
  if (!is_valid(RVType::kBlock, *bi) || !is_valid(RVType::kLoop, *li)) return false;
  const ir::BlockNode* block = block_at(block_rv->id);
  const ir::ForNode* loop = loop_at(loop_rv->id);
  auto above = loops_above_.find(block);
  auto in_scope = loops_in_scope_.find(block);
  auto realize_it = realize_of_.find(block);
  if (above == loops_above_.end() || in_scope == loops_in_scope_.end() || realize_it == realize_of_.end())
    return std::nullopt;
  const ir::BlockRealizeNode* realize = realize_it->second;
  if (realize->iter_values.size() != block->iter_vars.size()) return std::nullopt;
  const std::vector<const ir::ForNode*> loops(above->second.end() - static_cast<std::ptrdiff_t>(in_scope->second),
                                              above->second.end());
  const size_t top = static_cast<size_t>(std::find(loops.begin(), loops.end(), loop) - loops.begin());
  if (top == loops.size()) return false;
  if (!block->init.defined()) return false;
  std::vector<const ir::VarNode*> reduce_vars;
  for (const ir::IterVar& iv : block->iter_vars) {
    if (iv.kind == ir::IterKind::kReduce) reduce_vars.push_back(iv.var.get());
    else if (iv.kind != ir::IterKind::kSpatial) return false;
  }
  // The primitive substitutes zeros for the reduce variables in the init and fails when
  // that changes it: decided here for an init that is one store.
  const auto* store = block->init.as<ir::BufferStoreNode>();
  if (store == nullptr) return std::nullopt;
  for (const ir::VarNode* v : reduce_vars) {
    if (uses_var(store->value, v)) return false;
    for (const ir::Expr& index : store->indices) {
      if (uses_var(index, v)) return false;
    }
  }
  for (size_t p = 0; p < top; ++p) {
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i].kind == ir::IterKind::kReduce && uses_var(realize->iter_values[i], loops[p]->loop_var.get()))
        return false;
    }
  }
  if (!realize->predicate.defined() || ir::is_const_int(realize->predicate, 1)) return true;
  for (size_t p = top; p < loops.size(); ++p) {
    bool spatial = false;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      spatial |= block->iter_vars[i].kind == ir::IterKind::kSpatial &&
                 uses_var(realize->iter_values[i], loops[p]->loop_var.get());
    }
    if (!spatial && uses_var(realize->predicate, loops[p]->loop_var.get())) return std::nullopt;
  }
  return true;
}

std::optional<bool> LineOracle::storage_align_outcome(const std::vector<Arg>& inputs,
                                                      const std::vector<Arg>& attrs) const {
  // storage_align.cc, in order: the block resolves (0); the index is in range (1); the axis
  // in [-rank, rank) (2); factor > 0 (3); offset in [0, factor) (4); the buffer is not a
  // parameter (5). A block already aligned is left to the trial (its annotation is parsed).
  if (inputs.size() != 1 || attrs.size() != 4) return std::nullopt;
  const auto* rv = inputs[0].as<RandomVar>();
  const auto* index = attrs[0].as<int64_t>();
  const auto* axis = attrs[1].as<int64_t>();
  const auto* factor = attrs[2].as<int64_t>();
  const auto* offset = attrs[3].as<int64_t>();
  if (rv == nullptr || rv->type != RVType::kBlock || !index || !axis || !factor || !offset) return std::nullopt;
  auto i = script_index(*rv);
  if (!i) return std::nullopt;
  if (!is_valid(RVType::kBlock, *i)) return false;
  const ir::BlockNode* block = block_at(rv->id);
  if (*index < 0 || *index >= static_cast<int64_t>(block->writes.size())) return false;
  const ir::Buffer& buffer = block->writes[*index].buffer;
  const int64_t rank = buffer.ndim();
  if (*axis < -rank || *axis >= rank || *factor <= 0 || *offset < 0 || *offset >= *factor) return false;
  const auto& params = state_->sch.func()->params;
  if (std::any_of(params.begin(), params.end(), [&](const ir::Param& p) { return p.buffer.same_as(buffer); }))
    return false;
  if (block->annotations.count(std::string(ir::kBufferDimAlignKey)) > 0) return std::nullopt;
  return true;
}

std::optional<bool> LineOracle::set_scope_outcome(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs) const {
  // cache_read_write.cc's Schedule::set_scope, in full: the block resolves (0), the index
  // is in range (1), a storage scope (2), and the buffer is not a parameter (3).
  if (inputs.size() != 1 || attrs.size() != 2) return std::nullopt;
  const auto* index = attrs[0].as<int64_t>();
  const auto* storage = attrs[1].as<std::string>();
  const auto* rv = inputs[0].as<RandomVar>();
  if (index == nullptr || storage == nullptr || rv == nullptr || rv->type != RVType::kBlock) return std::nullopt;
  auto i = script_index(*rv);
  if (!i) return std::nullopt;
  if (!is_valid(RVType::kBlock, *i)) return false;
  const ir::BlockNode* block = block_at(rv->id);
  if (*index < 0 || *index >= static_cast<int64_t>(block->writes.size())) return false;
  if (!is_storage_scope(*storage)) return false;
  const ir::BufferNode* buffer = block->writes[*index].buffer.get();
  const auto& params = state_->sch.func()->params;
  return std::none_of(params.begin(), params.end(), [&](const ir::Param& p) { return p.buffer.get() == buffer; });
}

bool LineOracle::loop_feeds_producer_reduction(const Arg& block, const Arg& loop) const {
  // compute_at.cc's ReverseComputeAt precondition 7: a block under the loop (no block
  // between them) that writes a buffer the consumer reads, with a non-spatial iteration
  // variable bound through the loop or a loop above it in the scope. With precondition
  // 4 that buffer is the one the consumer is placed after, so the primitive fails.
  const auto* block_rv = block.as<RandomVar>();
  const auto* loop_rv = loop.as<RandomVar>();
  if (block_rv == nullptr || loop_rv == nullptr || block_rv->type != RVType::kBlock || loop_rv->type != RVType::kLoop)
    return false;
  const ir::BlockNode* consumer = block_at(block_rv->id);
  const ir::ForNode* node = loop_at(loop_rv->id);
  for (const auto& [other, loops] : loops_above_) {
    if (other == consumer) continue;
    auto at = std::find(loops.begin(), loops.end(), node);
    if (at == loops.end()) continue;
    const size_t scope_start = loops.size() - loops_in_scope_.at(other);
    const size_t k = static_cast<size_t>(at - loops.begin());
    if (k < scope_start) continue;  // a block lies between the loop and this one
    bool produces = false;
    for (const ir::BufferRegion& write : other->writes) {
      for (const ir::BufferRegion& read : consumer->reads) produces |= write.buffer.get() == read.buffer.get();
    }
    if (!produces) continue;
    auto realize = realize_of_.find(other);
    if (realize == realize_of_.end() || realize->second->iter_values.size() != other->iter_vars.size()) continue;
    for (size_t i = 0; i < other->iter_vars.size(); ++i) {
      if (other->iter_vars[i].kind == ir::IterKind::kSpatial) continue;
      for (size_t j = scope_start; j <= k; ++j) {
        if (uses_var(realize->second->iter_values[i], loops[j]->loop_var.get())) return true;
      }
    }
  }
  return false;
}

bool LineOracle::consumer_outside_loop(const Arg& block, const Arg& loop) const {
  // compute_at.cc's ComputeAt precondition 5 (with 3's single output): another block
  // writes the output, or reads it without lying under the loop.
  const auto* block_rv = block.as<RandomVar>();
  const auto* loop_rv = loop.as<RandomVar>();
  if (block_rv == nullptr || loop_rv == nullptr || block_rv->type != RVType::kBlock || loop_rv->type != RVType::kLoop)
    return false;
  const ir::BlockNode* producer = block_at(block_rv->id);
  const ir::ForNode* node = loop_at(loop_rv->id);
  if (producer->writes.size() != 1) return true;
  const ir::BufferNode* out = producer->writes[0].buffer.get();
  auto touches = [&](const std::vector<ir::BufferRegion>& regions) {
    return std::any_of(regions.begin(), regions.end(), [&](const ir::BufferRegion& r) { return r.buffer.get() == out; });
  };
  for (const auto& [other, loops] : loops_above_) {
    if (other == producer) continue;
    if (touches(other->writes)) return true;
    if (touches(other->reads) && std::find(loops.begin(), loops.end(), node) == loops.end()) return true;
  }
  return false;
}

bool LineOracle::single_complete_producer(const ir::BlockNode* block) const {
  // compute_inline.cc's ReverseComputeInline precondition 4: of the buffers the block
  // reads, exactly one is written by another leaf block, and its producer (one of those
  // writers) is complete, writes only it, with one store to it as its body. False when no
  // writer can be that producer.
  auto leaf_writers = [&](const ir::BufferNode* buffer) {
    std::vector<const ir::BlockNode*> out;
    for (const auto& [other, loops] : loops_above_) {
      if (other == block || non_leaf_blocks_.count(other) > 0) continue;
      for (const ir::BufferRegion& w : other->writes) {
        if (w.buffer.get() == buffer) {
          out.push_back(other);
          break;
        }
      }
    }
    return out;
  };
  const ir::BufferNode* input = nullptr;
  for (const ir::BufferRegion& r : block->reads) {
    if (r.buffer.get() == input || leaf_writers(r.buffer.get()).empty()) continue;
    if (input != nullptr) return false;
    input = r.buffer.get();
  }
  if (input == nullptr) return false;
  for (const ir::BlockNode* producer : leaf_writers(input)) {
    const auto* store = producer->body.as<ir::BufferStoreNode>();
    if (spatial_without_init(producer) && producer->writes.size() == 1 && store != nullptr &&
        store->buffer.get() == input)
      return true;
  }
  return false;
}

bool LineOracle::witness_ruled_out(InstructionKind kind, const std::vector<Arg>& values) const {
  // Only a cost decision (a witness skipped is searched for): the checks the search
  // makes before a trial, on the witness's operands.
  const bool location = kind == InstructionKind::ComputeAt || kind == InstructionKind::ReverseComputeAt;
  for (size_t s = 0; s < values.size(); ++s) {
    const auto* rv = values[s].as<RandomVar>();
    if (rv != nullptr && rv->type != RVType::kExpr) {
      const bool mark = location && s == 1 && is_location_mark(values[s]);
      auto i = script_index(*rv);
      if (i && !mark && !is_valid(rv->type, *i)) return true;
    }
    if (operand_rules_out(kind, s, values[s], std::vector<Arg>(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(s))))
      return true;
    if (location && s == 1 && !is_location_mark(values[1])) {
      if (loop_above_block(values[0], values[1])) return true;
      if (kind == InstructionKind::ReverseComputeAt && !loop_holds_producer(values[0], values[1])) return true;
    }
  }
  return false;
}

bool LineOracle::mnemonic_applies_by_rule(InstructionKind kind) const {
  // Each case names the completion that applies and why (schedule.h's preconditions and
  // the primitive's source): a lookup, sample or annotation whose only check is that its
  // operand resolves. The search would find the same completion by a trial.
  auto any_valid = [&](RVType type, auto&& also) {
    const auto& vars = state_->vars[static_cast<size_t>(type)];
    for (size_t i = 0; i < vars.size(); ++i) {
      if (is_valid(type, i) && also(vars[i])) return true;
    }
    return false;
  };
  auto always = [](const RandomVar&) { return true; };
  switch (kind) {
    case InstructionKind::SampleCategorical:  // `sc [0] = 0`: one candidate, index 0
    case InstructionKind::EnterPostproc:      // records a mark, reads nothing
      return true;
    case InstructionKind::GetBlock:  // a block of the IR by its name (the root at least)
      return !block_names_.empty();
    case InstructionKind::GetLoops:
    case InstructionKind::GetProducers:
    case InstructionKind::GetConsumers:
    // No precondition beyond the block resolving; the root mark (-1) is always a
    // candidate, so replay keeps that decision.
    case InstructionKind::SampleComputeLocation:
      return any_valid(RVType::kBlock, always);
    case InstructionKind::GetChildBlocks:
    case InstructionKind::Annotate:  // a literal value under any key
      return any_valid(RVType::kBlock, always) || any_valid(RVType::kLoop, always);
    case InstructionKind::Unroll:       // no precondition
    case InstructionKind::AddUnitLoop:  // a loop target has no precondition
      return any_valid(RVType::kLoop, always);
    case InstructionKind::SamplePerfectTile:  // n = 1, the decision [extent]
      return any_valid(RVType::kLoop, [&](const RandomVar& rv) {
        auto extent = ir::as_const_int(loop_at(rv.id)->extent);
        return extent && *extent >= 1;
      });
    default: return false;
  }
}

bool LineOracle::operand_rules_out(InstructionKind kind, size_t slot, const Arg& value,
                                   const std::vector<Arg>& before) const {
  try {
    if (slot == 1 && (kind == InstructionKind::ReverseComputeAt) && !is_location_mark(value)) {
      return loop_feeds_producer_reduction(before.at(0), value);
    }
    if (slot == 1 && kind == InstructionKind::ComputeAt && !is_location_mark(value)) {
      return consumer_outside_loop(before.at(0), value);
    }
    if (slot == 1 && (kind == InstructionKind::StorageAlign || kind == InstructionKind::SetScope)) {
      // storage_align.cc / set_scope (cache_read_write.cc): IndexOutOfRange, or
      // ParameterBuffer when the buffer written at that index is a parameter.
      const auto* block_rv = before.at(0).as<RandomVar>();
      const auto* index = value.as<int64_t>();
      if (block_rv == nullptr || block_rv->type != RVType::kBlock || index == nullptr) return false;
      const ir::BlockNode* block = block_at(block_rv->id);
      if (*index < 0 || *index >= static_cast<int64_t>(block->writes.size())) return true;
      const ir::Buffer& buffer = block->writes[*index].buffer;
      const auto& params = state_->sch.func()->params;
      return std::any_of(params.begin(), params.end(), [&](const ir::Param& p) { return p.buffer.same_as(buffer); });
    }
  } catch (const std::exception&) {
    return false;  // unresolvable: the trial decides
  }
  if (slot != 0) return false;
  const auto* rv = value.as<RandomVar>();
  if (rv == nullptr) return false;
  try {
    switch (kind) {
      case InstructionKind::RFactor: {
        if (rv->type != RVType::kLoop) return false;
        const ir::ForNode* loop = loop_at(rv->id);
        if (!rfactor_loop_possible(loop)) return true;
        // rfactor.cc's preconditions 4 (every loop of the scope feeding a reduce variable
        // feeds no spatial one and has bounds free of the scope's loops) and 5 (the
        // outermost loop of the scope holds this block alone); its 3 (the reducer) comes
        // between, and fails the trial too.
        ChildRealizes children(2);
        children.visit(loop->body);
        const ir::BlockRealizeNode* realize = children.found.at(0);
        const ir::BlockNode* block = realize->block.get();
        auto above = loops_above_.find(block);
        auto in_scope = loops_in_scope_.find(block);
        if (above == loops_above_.end() || in_scope == loops_in_scope_.end() || in_scope->second == 0) return false;
        const std::vector<const ir::ForNode*> scope_loops(above->second.end() - static_cast<std::ptrdiff_t>(in_scope->second),
                                                          above->second.end());
        for (const ir::ForNode* l : scope_loops) {
          bool reduce = false, spatial = false, bound_uses_loop = false;
          for (size_t i = 0; i < block->iter_vars.size(); ++i) {
            if (!uses_var(realize->iter_values[i], l->loop_var.get())) continue;
            reduce |= block->iter_vars[i].kind == ir::IterKind::kReduce;
            spatial |= block->iter_vars[i].kind == ir::IterKind::kSpatial;
          }
          for (const ir::ForNode* other : scope_loops) {
            bound_uses_loop |= uses_var(l->min, other->loop_var.get()) || uses_var(l->extent, other->loop_var.get());
          }
          if (reduce && (spatial || bound_uses_loop)) return true;
        }
        ChildRealizes nest(2);
        nest.visit(ir::Stmt(scope_loops.front()));
        return nest.found.size() != 1;
      }
      case InstructionKind::ComputeAt:
      case InstructionKind::ReverseComputeAt: {
        // compute_at.cc, for a loop that is not a location mark (marks return before any
        // check; without marks every loop tried is a real one): precondition 1 (not the
        // root block) and the block-only parts of 3 (one written buffer; ComputeAt:
        // spatial or reduce variables, ReverseComputeAt: spatial ones only).
        if (rv->type != RVType::kBlock || has_location_marks_) return false;
        const ir::BlockNode* block = block_at(rv->id);
        if (top_level_blocks_.count(block) > 0 || block->writes.size() != 1) return true;
        // ComputeAt's precondition 4: not a block writing a parameter (OutputBlock).
        if (kind == InstructionKind::ComputeAt && writes_parameter(block)) return true;
        for (const ir::IterVar& iv : block->iter_vars) {
          if (iv.kind == ir::IterKind::kSpatial) continue;
          if (kind == InstructionKind::ReverseComputeAt || iv.kind != ir::IterKind::kReduce) return true;
        }
        return false;
      }
      case InstructionKind::Blockize: {
        // blockize.cc's precondition 1: from the loop down, each loop's body is the next
        // loop, down to one block realization.
        if (rv->type != RVType::kLoop) return false;
        // Then 2: those loops have constant bounds.
        const ir::StmtNode* node = loop_at(rv->id);
        while (node->kind == ir::NodeKind::For) {
          const auto* loop = static_cast<const ir::ForNode*>(node);
          if (!ir::as_const_int(loop->min) || !ir::as_const_int(loop->extent)) return true;
          node = loop->body.get();
        }
        return node->kind != ir::NodeKind::BlockRealize;
      }
      case InstructionKind::ComputeInline:
      case InstructionKind::ReverseComputeInline: {
        // compute_inline.cc: precondition 1 (one written buffer), then the block alone
        // of precondition 3 (ComputeInline) or 2 (ReverseComputeInline); location marks
        // do not reach these primitives.
        if (rv->type != RVType::kBlock) return false;
        const ir::BlockNode* block = block_at(rv->id);
        if (block->writes.size() != 1 || !spatial_without_init(block)) return true;
        // ComputeInline's precondition 2: the buffer is not a parameter (OutputBlock).
        if (kind == InstructionKind::ComputeInline && writes_parameter(block)) return true;
        return kind == InstructionKind::ReverseComputeInline && !single_complete_producer(block);
      }
      default: return false;
    }
  } catch (const std::exception&) {
    return false;  // unresolvable: the trial decides
  }
}

std::optional<bool> LineOracle::outcome_by_rule(InstructionKind kind, const std::vector<Arg>& inputs,
                                                const std::vector<Arg>& attrs, const std::optional<Arg>& decision,
                                                std::optional<int64_t> count) const {
  // Decisions and counts are judged by the rules below that name them; elsewhere the
  // trial decides.
  const bool takes_decision = kind == InstructionKind::SamplePerfectTile || kind == InstructionKind::SampleCategorical;
  if ((decision && !takes_decision) || (count && *count != kAnyCount && kind != InstructionKind::GetLoops))
    return std::nullopt;
  auto int_list = [](const Arg& a) -> std::optional<std::vector<int64_t>> {
    const auto* list = a.as<Arg::List>();
    if (list == nullptr) return std::nullopt;
    std::vector<int64_t> out;
    for (const Arg& e : *list) {
      const auto* i = e.as<int64_t>();
      if (i == nullptr) return std::nullopt;
      out.push_back(*i);
    }
    return out;
  };
  // A block (or loop) variable of the script: nullopt when it is not one (the trial
  // decides), else whether it resolves.
  auto script_var_valid = [&](const Arg& a, bool block_ok, bool loop_ok) -> std::optional<bool> {
    const auto* rv = a.as<RandomVar>();
    if (rv == nullptr || !((rv->type == RVType::kBlock && block_ok) || (rv->type == RVType::kLoop && loop_ok)))
      return std::nullopt;
    auto i = script_index(*rv);
    if (!i) return std::nullopt;
    return is_valid(rv->type, *i);
  };
  // The loops of the operands, or nullopt when an operand is not a loop variable.
  auto loop_of = [&](const Arg& a) -> std::optional<const ir::ForNode*> {
    const auto* rv = a.as<RandomVar>();
    if (rv == nullptr || rv->type != RVType::kLoop) return std::nullopt;
    auto i = script_index(*rv);
    if (!i) return std::nullopt;  // not a script variable: the trial decides
    return is_valid(RVType::kLoop, *i) ? loop_at(rv->id) : nullptr;
  };
  auto serial_from_zero = [](const ir::ForNode* l) {
    return ir::is_const_int(l->min, 0) && l->for_kind == ir::ForKind::kSerial && l->annotations.empty();
  };
  switch (kind) {
    case InstructionKind::Split: {
      // split.cc, in full: the loop resolves, starts at 0, is serial and unannotated, has
      // a constant extent; at most one None; the other factors in [1, max of the loop's
      // type]; without None the product covers the extent; the product with the inferred
      // factor fits the type; disable_predication is false. Nothing else can fail.
      if (inputs.empty() || attrs.size() != 2 || !attrs[0].as<bool>() || !attrs[1].as<bool>()) return std::nullopt;
      auto loop = loop_of(inputs[0]);
      if (!loop) return std::nullopt;
      if (*loop == nullptr || *attrs[1].as<bool>()) return false;
      std::vector<std::optional<int64_t>> factors;
      for (size_t i = 1; i < inputs.size(); ++i) {
        if (inputs[i].is_none()) {
          factors.push_back(std::nullopt);
        } else if (const auto* c = inputs[i].as<int64_t>()) {
          factors.push_back(*c);
        } else if (const auto* rv = inputs[i].as<RandomVar>(); rv && rv->type == RVType::kExpr) {
          auto value = expr_value(rv->id);
          if (!value) return false;
          factors.push_back(*value);
        } else {
          return std::nullopt;
        }
      }
      const ir::ForNode* l = *loop;
      auto extent = ir::as_const_int(l->extent);
      if (!serial_from_zero(l) || !extent || factors.empty()) return false;
      const int64_t type_max = ir::int_max_value(l->loop_var.dtype());
      int inferred = 0;
      int64_t product = 1;
      for (const auto& f : factors) {
        if (!f) {
          ++inferred;
          continue;
        }
        if (*f <= 0 || *f > type_max) return false;
        product = product > INT64_MAX / *f ? INT64_MAX : product * *f;
      }
      if (inferred > 1) return false;
      if (inferred == 1) {
        const int64_t f = (*extent + product - 1) / product;
        product = product > INT64_MAX / f ? INT64_MAX : product * f;
      } else if (product < *extent) {
        return false;
      }
      return product <= type_max;
    }
    case InstructionKind::Fuse: {
      // fuse.cc, in full: the loops resolve, at least one, none twice, each the body of
      // the one before, each from 0 with a constant extent, serial and unannotated.
      if (attrs.size() != 1 || !attrs[0].as<bool>() || inputs.empty()) return std::nullopt;
      std::vector<const ir::ForNode*> loops;
      for (const Arg& a : inputs) {
        auto loop = loop_of(a);
        if (!loop) return std::nullopt;
        if (*loop == nullptr) return false;
        loops.push_back(*loop);
      }
      for (size_t i = 0; i < loops.size(); ++i) {
        if (std::find(loops.begin(), loops.begin() + static_cast<std::ptrdiff_t>(i), loops[i]) !=
            loops.begin() + static_cast<std::ptrdiff_t>(i))
          return false;
        if (i > 0 && loops[i - 1]->body.get() != loops[i]) return false;
        if (!serial_from_zero(loops[i]) || !ir::as_const_int(loops[i]->extent)) return false;
      }
      return true;
    }
    case InstructionKind::EnterPostproc:  // schedule.cc: records a mark
      if (!inputs.empty() || !attrs.empty()) return std::nullopt;
      return true;
    case InstructionKind::Unannotate: {
      // annotate.cc: the target resolves and has the key.
      if (inputs.size() != 1 || attrs.size() != 1 || !attrs[0].as<std::string>()) return std::nullopt;
      auto target = script_var_valid(inputs[0], true, true);
      if (!target) return std::nullopt;
      if (!*target) return false;
      const auto* rv = inputs[0].as<RandomVar>();
      const ir::Annotations& ann =
          rv->type == RVType::kBlock ? block_at(rv->id)->annotations : loop_at(rv->id)->annotations;
      return ann.count(*attrs[0].as<std::string>()) > 0;
    }
    case InstructionKind::Parallel:
    case InstructionKind::Vectorize:
    case InstructionKind::Bind: {
      // loop_kind.cc: the loop resolves; Bind's tag is a thread axis; no block directly
      // under the loop binds it into a variable other than spatial ones (or reduce ones,
      // for threadIdx: a cross-thread reduction).
      const bool bind = kind == InstructionKind::Bind;
      if (inputs.size() != 1 || attrs.size() != (bind ? 1u : 0u)) return std::nullopt;
      const std::string* tag = bind ? attrs[0].as<std::string>() : nullptr;
      if (bind && tag == nullptr) return std::nullopt;
      auto loop = loop_of(inputs[0]);
      if (!loop) return std::nullopt;
      if (*loop == nullptr) return false;
      static const std::set<std::string, std::less<>> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                               "threadIdx.x", "threadIdx.y", "threadIdx.z",
                                                               "vthread.x",   "vthread.y",   "vthread.z"};
      if (bind && kTags.count(*tag) == 0) return false;
      const bool allow_reduce = bind && tag->starts_with("threadIdx.");
      ChildRealizes children;
      children.visit((*loop)->body);
      for (const ir::BlockRealizeNode* r : children.found) {
        if (r->iter_values.size() > r->block->iter_vars.size()) return std::nullopt;
        for (size_t k = 0; k < r->iter_values.size(); ++k) {
          const ir::IterKind ik = r->block->iter_vars[k].kind;
          if (ik == ir::IterKind::kSpatial || (allow_reduce && ik == ir::IterKind::kReduce)) continue;
          if (uses_var(r->iter_values[k], (*loop)->loop_var.get())) return false;
        }
      }
      return true;
    }
    case InstructionKind::Annotate: {
      // annotate.cc: the target resolves, and the value when it is a variable; the key
      // and a literal value are only stored.
      if (inputs.size() != 2 || attrs.size() != 1 || !attrs[0].as<std::string>()) return std::nullopt;
      auto target = script_var_valid(inputs[0], true, true);
      if (!target) return std::nullopt;
      const Arg& value = inputs[1];
      if (value.as<int64_t>() || value.as<double>() || value.as<std::string>() || value.as<bool>()) return *target;
      const auto* rv = value.as<RandomVar>();
      if (rv == nullptr || rv->type != RVType::kExpr) return std::nullopt;
      return *target && state_->sch.is_valid(*rv);
    }
    case InstructionKind::GetLoops: {
      // lookup.cc: the block resolves; the outputs are the loops between it and its
      // enclosing block, which a written count must equal.
      if (inputs.size() != 1 || !attrs.empty()) return std::nullopt;
      auto valid = script_var_valid(inputs[0], true, false);
      if (!valid) return std::nullopt;
      if (!*valid) return false;
      auto it = loops_in_scope_.find(block_at(inputs[0].as<RandomVar>()->id));
      if (it == loops_in_scope_.end()) return std::nullopt;
      return !count || *count == kAnyCount || *count == static_cast<int64_t>(it->second);
    }
    case InstructionKind::SamplePerfectTile: {
      // sampling.cc: the loop resolves; n >= 1; a constant extent >= 1; max_innermost_factor
      // -1 or >= 1; a decision of n factors, which replay keeps only when repairing it to
      // a perfect tiling of the extent changes nothing.
      if (inputs.size() != 1 || attrs.size() != 2 || !decision) return std::nullopt;
      const auto* n = attrs[0].as<int64_t>();
      const auto* max_inner = attrs[1].as<int64_t>();
      auto factors = int_list(*decision);
      if (n == nullptr || max_inner == nullptr || !factors) return std::nullopt;
      if (*n < 1 || *n > std::numeric_limits<int>::max() || *max_inner < std::numeric_limits<int>::min() ||
          *max_inner > std::numeric_limits<int>::max())
        return std::nullopt;  // the primitive reads them as int
      auto loop = loop_of(inputs[0]);
      if (!loop) return std::nullopt;
      if (*loop == nullptr) return false;
      auto extent = ir::as_const_int((*loop)->extent);
      if (!extent || *extent < 1) return false;
      if (*max_inner != -1 && *max_inner < 1) return false;
      if (static_cast<int64_t>(factors->size()) != *n) return false;
      return schedule::repair_perfect_tile(*factors, *extent) == *factors;
    }
    case InstructionKind::SampleCategorical: {
      // sampling.cc: candidates not empty, as many probabilities, each finite and >= 0,
      // summing to > 0; the decision an index into the candidates (kept as given).
      if (!inputs.empty() || attrs.size() != 2 || !decision) return std::nullopt;
      auto candidates = int_list(attrs[0]);
      const auto* probs = attrs[1].as<Arg::List>();
      const auto* index = decision->as<int64_t>();
      if (!candidates || probs == nullptr || index == nullptr) return std::nullopt;
      double total = 0;
      bool valid = !candidates->empty() && candidates->size() == probs->size();
      for (const Arg& p : *probs) {
        const auto* d = p.as<double>();
        if (d == nullptr) return std::nullopt;
        valid &= std::isfinite(*d) && *d >= 0;
        total += *d;
      }
      return valid && total > 0 && *index >= 0 && *index < static_cast<int64_t>(candidates->size());
    }
    case InstructionKind::Reorder: {
      // reorder.cc, in full: the loops resolve, none twice (one or none is then recorded
      // as is); 2) they lie on one chain of loops, each the body of the one before, from
      // the outermost given down to the innermost; 3) in the new order no loop's bounds
      // use a loop inside it; 4) for each block directly under the chain, loops feeding
      // an ordered or opaque variable keep their relative order, and so do loops feeding
      // reduce variables when one of the two also feeds a spatial one.
      if (!attrs.empty()) return std::nullopt;
      std::vector<const ir::ForNode*> loops;
      for (const Arg& a : inputs) {
        auto loop = loop_of(a);
        if (!loop) return std::nullopt;
        if (*loop == nullptr) return false;
        loops.push_back(*loop);
      }
      for (size_t i = 0; i < loops.size(); ++i) {
        if (std::find(loops.begin(), loops.begin() + static_cast<std::ptrdiff_t>(i), loops[i]) !=
            loops.begin() + static_cast<std::ptrdiff_t>(i))
          return false;
      }
      if (loops.size() <= 1) return true;
      std::vector<const ir::ForNode*> chain;
      for (const ir::ForNode* top : loops) {
        chain.clear();
        size_t found = 0, last = 0;
        for (const ir::StmtNode* node = top; node->kind == ir::NodeKind::For;
             node = static_cast<const ir::ForNode*>(node)->body.get()) {
          chain.push_back(static_cast<const ir::ForNode*>(node));
          if (std::find(loops.begin(), loops.end(), chain.back()) != loops.end()) {
            ++found;
            last = chain.size();
          }
        }
        if (found == loops.size()) {
          chain.resize(last);
          break;
        }
        chain.clear();
      }
      if (chain.empty()) return false;
      std::vector<size_t> positions;
      for (const ir::ForNode* l : loops) {
        positions.push_back(static_cast<size_t>(std::find(chain.begin(), chain.end(), l) - chain.begin()));
      }
      std::sort(positions.begin(), positions.end());
      std::vector<const ir::ForNode*> order = chain;
      for (size_t i = 0; i < loops.size(); ++i) order[positions[i]] = loops[i];
      for (size_t p = 0; p < order.size(); ++p) {
        for (size_t q = p + 1; q < order.size(); ++q) {
          const ir::VarNode* inner = order[q]->loop_var.get();
          if (uses_var(order[p]->min, inner) || uses_var(order[p]->extent, inner)) return false;
        }
      }
      auto rank_in = [](const std::vector<const ir::ForNode*>& seq, const ir::ForNode* l) {
        return std::find(seq.begin(), seq.end(), l) - seq.begin();
      };
      ChildRealizes children;
      children.visit(chain.back()->body);
      for (const ir::BlockRealizeNode* r : children.found) {
        const ir::BlockNode* b = r->block.get();
        if (r->iter_values.size() != b->iter_vars.size()) return std::nullopt;
        std::vector<bool> ordered(chain.size()), reduce(chain.size()), mixed(chain.size());
        for (size_t c = 0; c < chain.size(); ++c) {
          bool feeds[4] = {false, false, false, false};  // by IterKind
          for (size_t k = 0; k < r->iter_values.size(); ++k) {
            if (uses_var(r->iter_values[k], chain[c]->loop_var.get())) feeds[static_cast<int>(b->iter_vars[k].kind)] = true;
          }
          ordered[c] = feeds[static_cast<int>(ir::IterKind::kOrdered)] || feeds[static_cast<int>(ir::IterKind::kOpaque)];
          reduce[c] = feeds[static_cast<int>(ir::IterKind::kReduce)];
          mixed[c] = reduce[c] && feeds[static_cast<int>(ir::IterKind::kSpatial)];
        }
        for (size_t a = 0; a < chain.size(); ++a) {
          for (size_t c = a + 1; c < chain.size(); ++c) {
            const bool constrained = (ordered[a] && ordered[c]) || (reduce[a] && reduce[c] && (mixed[a] || mixed[c]));
            if (constrained && rank_in(order, chain[a]) > rank_in(order, chain[c])) return false;
          }
        }
      }
      return true;
    }
    case InstructionKind::CacheRead: return cache_read_outcome(inputs, attrs);
    case InstructionKind::CacheWrite: return cache_write_outcome(inputs, attrs);
    case InstructionKind::SetScope: return set_scope_outcome(inputs, attrs);
    case InstructionKind::DecomposeReduction: return decompose_reduction_outcome(inputs, attrs);
    case InstructionKind::RFactor: return rfactor_outcome(inputs, attrs);
    case InstructionKind::Blockize: return blockize_outcome(inputs, attrs);
    case InstructionKind::StorageAlign: return storage_align_outcome(inputs, attrs);
    default: return std::nullopt;
  }
}

}  // namespace dragon::script::decoding
