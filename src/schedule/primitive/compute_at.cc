// compute_at and reverse_compute_at: move a producer (consumer) block under a loop of its
// consumers (producers) and regenerate its loops to cover, per iteration of that loop, the
// region the blocks below it read (write); the region analysis is in region_cover.h. Also
// the root and inline marks of SampleComputeLocation. Not the sampling itself (sampling.cc).
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include <fmt/format.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../ir_tree.h"
#include "region_cover.h"

namespace dragon::schedule {

using namespace dragon::ir;

using detail::Access;
using detail::Interval;
using detail::RelaxMap;

namespace {

// Loop variable names of a function, but for those of the nest that leaves (`skip`), to
// give new loops fresh names.
class LoopNames : public StmtVisitor {
 public:
  explicit LoopNames(const StmtNode* skip) : skip_(skip) {}
  std::unordered_set<std::string> names;

 protected:
  void visit_(const ForNode* op) override {
    if (op == skip_) return;
    names.insert(op->loop_var.name());
    StmtVisitor::visit_(op);
  }

 private:
  const StmtNode* skip_;
};

std::string fresh_name(std::unordered_set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int i = 1; taken.count(name); ++i) name = fmt::format("{}_{}", base, i);
  taken.insert(name);
  return name;
}

// The children of a loop body, in order.
std::vector<Stmt> children_of(const Stmt& body) {
  if (const auto* seq = body.as<SeqStmtNode>()) return seq->seq;
  return {body};
}

bool reads_buffer(const BlockNode* block, const BufferNode* buffer) {
  return std::any_of(block->reads.begin(), block->reads.end(),
                     [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

bool writes_buffer(const BlockNode* block, const BufferNode* buffer) {
  return std::any_of(block->writes.begin(), block->writes.end(),
                     [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

// Every block realization of a statement, nested ones included.
class AllRealizes : public StmtVisitor {
 public:
  std::vector<const BlockRealizeNode*> result;

 protected:
  void visit_(const BlockRealizeNode* op) override {
    result.push_back(op);
    StmtVisitor::visit_(op);
  }
};

// For an access at point indices that are distinct spatial iteration variables, the
// dimension each iteration variable indexes (-1 for none); nullopt for any other access.
std::optional<std::vector<int>> point_dims(const BlockNode* block, const BufferRegion& access) {
  std::vector<int> dim_of(block->iter_vars.size(), -1);
  for (size_t d = 0; d < access.region.size(); ++d) {
    const Range& r = access.region[d];
    const auto* v = r.min.as<VarNode>();
    int k = -1;
    for (size_t i = 0; v != nullptr && i < block->iter_vars.size(); ++i) {
      if (block->iter_vars[i].var.get() == v) k = static_cast<int>(i);
    }
    if (k < 0 || !is_const_int(r.extent, 1) || block->iter_vars[k].kind != IterKind::kSpatial || dim_of[k] >= 0) {
      return std::nullopt;
    }
    dim_of[k] = static_cast<int>(d);
  }
  return dim_of;
}

// The block's new loop nest: one loop per iteration variable, outermost first; those in
// `dim_of` cover their dimension of `region`, the others their whole domain. The block
// is guarded where the covered extent may leave the region or the domain.
Stmt regenerate(const BlockRealizeNode* realize, const std::vector<int>& dim_of, const std::vector<Interval>& region,
                const std::vector<Expr>& extents, Analyzer analyzer, bool preserve_unit_loops,
                std::unordered_set<std::string>& names) {
  const BlockNode* block = realize->block.get();
  std::vector<Expr> bindings;
  std::vector<std::pair<Var, Expr>> loops;  // (variable, extent), outermost first
  Expr guard = make_bool(true);
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    const DataType type = iv.var.dtype();
    Expr lo = dim_of[i] >= 0 ? region[dim_of[i]].first : iv.dom.min;
    Expr extent = dim_of[i] >= 0 ? extents[dim_of[i]] : iv.dom.extent;
    if (!(lo.dtype() == type)) lo = cast(type, lo);
    if (!(extent.dtype() == type)) extent = cast(type, extent);
    Expr value = lo;
    if (!is_const_int(extent, 1) || preserve_unit_loops) {
      Var v(fresh_name(names, fmt::format("ax{}", i)), type);
      analyzer.bind(v, Range{make_zero(type), extent});
      loops.emplace_back(v, extent);
      value = lo + v;
    }
    value = analyzer.simplify(value);
    bindings.push_back(value);
    if (dim_of[i] >= 0) {
      Expr hi = region[dim_of[i]].second;
      if (!(hi.dtype() == type)) hi = cast(type, hi);
      for (Expr cond : {value <= hi, value >= iv.dom.min, value < iv.dom.min + iv.dom.extent}) {
        if (!analyzer.can_prove(cond)) guard = guard && cond;
      }
    }
  }
  Stmt nest = BlockRealizeNode::make(bindings, analyzer.simplify(guard), realize->block);
  for (size_t i = loops.size(); i-- > 0;) {
    nest = ForNode::make(loops[i].first, make_zero(loops[i].first.dtype()), loops[i].second, ForKind::kSerial, nest);
  }
  return nest;
}

// Where a block leaves from: its realization and the loops that hold only it, an element
// of a sequence. nullopt when the nest is not such an element.
std::optional<std::pair<const StmtNode*, const SeqStmtNode*>> removal_site(
    const std::vector<const StmtNode*>& block_path) {
  size_t at = block_path.size() - 2;
  const StmtNode* removed = block_path[at];
  while (at > 0 && block_path[at - 1]->kind == NodeKind::For &&
         static_cast<const ForNode*>(block_path[at - 1])->body.get() == removed) {
    removed = block_path[--at];
  }
  if (at == 0 || block_path[at - 1]->kind != NodeKind::SeqStmt) return std::nullopt;
  return std::make_pair(removed, static_cast<const SeqStmtNode*>(block_path[at - 1]));
}

// `func` with `removed` taken out of `parent` and `nest` inserted as child `position` of
// `loop` (which keeps its variable, so its random variables stay valid).
PrimFunc move_nest(const PrimFunc& func, const StmtNode* removed, const SeqStmtNode* parent, const ForNode* loop,
                   int64_t position, const Stmt& nest) {
  std::vector<Stmt> kept;
  for (const Stmt& s : parent->seq) {
    if (s.get() != removed) kept.push_back(s);
  }
  PrimFunc result = detail::replace_in_func(func, parent, SeqStmtNode::make(kept));
  std::vector<Stmt> children = children_of(loop->body);
  children.insert(children.begin() + position, nest);
  Stmt new_loop = ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, SeqStmtNode::make(children),
                                loop->thread_tag, loop->annotations);
  return detail::replace_in_func(result, loop, new_loop);
}

// The first (or last) child of the loop's body holding a block that satisfies `pred`.
std::optional<int64_t> child_holding(const ForNode* loop, bool last, const std::function<bool(const BlockNode*)>& pred) {
  std::vector<Stmt> children = children_of(loop->body);
  std::optional<int64_t> found;
  for (size_t c = 0; c < children.size(); ++c) {
    for (const BlockRealizeNode* r : detail::child_block_realizes(children[c])) {
      if (pred(r->block.get()) && (last || !found)) found = static_cast<int64_t>(c);
    }
  }
  return found;
}

std::string_view kind_word(IterKind kind) {
  switch (kind) {
    case IterKind::kSpatial: return "spatial";
    case IterKind::kReduce: return "a reduce variable";
    case IterKind::kOrdered: return "ordered (a scan)";
    case IterKind::kOpaque: return "opaque";
  }
  return "unknown";
}

bool contains(const std::vector<const BlockRealizeNode*>& list, const BlockRealizeNode* r) {
  return std::find(list.begin(), list.end(), r) != list.end();
}

// Preconditions 1 and 2 of compute_at and reverse_compute_at: where the block and the
// loop are, or which precondition fails and why.
struct Placement {
  std::vector<const StmtNode*> block_path;
  std::vector<const StmtNode*> loop_path;
  const BlockNode* scope = nullptr;
  const BlockRealizeNode* realize = nullptr;
};
struct PlacementFailure {
  int precondition;
  std::string error_name;
  std::string reason;
};

std::variant<Placement, PlacementFailure> place(const PrimFunc& func, const BlockNode* block, const ForNode* loop) {
  Placement p{detail::path_to(func, block), detail::path_to(func, loop), nullptr, nullptr};
  // 1) same scope.
  p.scope = detail::scope_block(p.block_path);
  if (p.scope == nullptr || detail::scope_block(p.loop_path) != p.scope) {
    return PlacementFailure{1, "NotInSameScope",
                            p.scope == nullptr
                                ? std::string("the block is the root block")
                                : fmt::format("the loop is not in the scope of block '{}'", p.scope->name)};
  }
  // 2) the loop is not an ancestor of the block.
  if (std::find(p.block_path.begin(), p.block_path.end(), static_cast<const StmtNode*>(loop)) != p.block_path.end()) {
    return PlacementFailure{2, "LoopIsAncestor", fmt::format("the loop already contains block '{}'", block->name)};
  }
  p.realize = static_cast<const BlockRealizeNode*>(p.block_path[p.block_path.size() - 2]);
  return p;
}

// The root (-1) or inline (-2) mark a LoopRV stands for when SampleComputeLocation made
// it: a loop entry without a loop variable whose value is the mark (see sampling.cc).
template <typename SymbolTable>
std::optional<int64_t> location_mark(const SymbolTable& symbols, LoopRV rv) {
  if (rv.id < 0 || rv.id >= static_cast<int64_t>(symbols.size())) return std::nullopt;
  const auto& e = symbols[rv.id];
  if (e.type != RVType::kLoop || e.loop_var.defined()) return std::nullopt;
  return e.value;
}

// The loops at or above the target loop (outermost first) over which a buffer of
// `storage_scope` must be relaxed besides the loops below: one copy in shared memory
// serves every thread (threadIdx.*) and virtual thread (vthread.*) of a thread block,
// one in warp memory every lane (threadIdx.x); local and global copies serve the
// iteration that computes them only. (TVM: CanRelaxStorageUnderThread; it never relaxes
// blockIdx, not even for global.)
RelaxMap thread_relaxation(const std::string& storage_scope, const std::vector<const ForNode*>& loops,
                           const Analyzer& analyzer) {
  const bool shared = storage_scope == "shared" || storage_scope == "shared.dyn";
  const bool warp = storage_scope == "warp";
  RelaxMap relaxed;
  for (const ForNode* f : loops) {
    if (f->for_kind != ForKind::kThreadBinding) continue;
    const std::string& tag = f->thread_tag;
    bool relax_it = (shared && (tag.rfind("threadIdx.", 0) == 0 || tag.rfind("vthread", 0) == 0)) ||
                    (warp && tag == "threadIdx.x");
    if (!relax_it) continue;
    auto lo = detail::relax(analyzer.simplify(f->min), relaxed);
    auto hi = detail::relax(analyzer.simplify(f->min + f->extent - 1), relaxed);
    if (lo && hi) relaxed[f->loop_var.get()] = Interval{lo->first, hi->second};
  }
  return relaxed;
}

}  // namespace

// SampleComputeLocation's marks, as TVM: root leaves the block where it is; inline is
// (reverse_)compute_inline (its preconditions and errors), recorded as the instruction.
bool Schedule::apply_location_mark(BlockRV block_rv, LoopRV loop_rv, Instruction& inst) {
  std::optional<int64_t> mark = location_mark(symbols_, loop_rv);
  if (!mark) return false;
  if (*mark == -1) {
    record(std::move(inst));
    return true;
  }
  Schedule inlined = copy();
  if (inst.kind == InstructionKind::ComputeAt) {
    inlined.compute_inline(block_rv);
  } else {
    inlined.reverse_compute_inline(block_rv);
  }
  commit(inlined.func_, std::move(inst));
  return true;
}

// What compute_at's construction needs, once its preconditions hold.
struct Schedule::ComputeAtPlan {
  const BlockRealizeNode* realize = nullptr;
  const ForNode* loop = nullptr;
  std::pair<const StmtNode*, const SeqStmtNode*> site;
  std::vector<int> dim_of;
  std::vector<Interval> region;
  std::vector<Expr> extents;
  Analyzer analyzer;
  int64_t position = 0;
};

// compute_at's preconditions 1 to 8 for a loop that is not a location mark, in order;
// the first that fails throws. Shared by compute_at and check_compute_at, so the check
// cannot drift from the primitive.
Schedule::ComputeAtPlan Schedule::plan_compute_at(BlockRV block_rv, LoopRV loop_rv, int64_t index) const {
  constexpr InstructionKind kKind = InstructionKind::ComputeAt;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  const std::string block_operand = fmt::format("block {}", rv_name(block_rv));
  const std::string loop_operand = fmt::format("loop {}", rv_name(loop_rv));
  const ErrorLocus at_block{nullptr, block->name};
  const ErrorLocus at_loop{loop->loop_var.get(), {}};

  // 1) same scope; 2) the loop is not an ancestor of the block.
  auto placed = place(func_, block, loop);
  if (const auto* failure = std::get_if<PlacementFailure>(&placed)) {
    throw error(kKind, failure->precondition, failure->error_name, loop_operand, failure->reason, at_loop);
  }
  const Placement& placement = std::get<Placement>(placed);
  const std::vector<const StmtNode*>& block_path = placement.block_path;
  const std::vector<const StmtNode*>& loop_path = placement.loop_path;
  const BlockNode* scope = placement.scope;
  const BlockRealizeNode* realize = placement.realize;
  // 3) complete (spatial) or a reduction with an init, writing one buffer at its
  // spatial iteration variables.
  auto incomplete = [&](const std::string& why) {
    return error(kKind, 3, "NotCompleteOrReduction", block_operand, why, at_block);
  };
  if (block->writes.size() != 1) {
    throw incomplete(fmt::format("the block writes {} buffers, not one", block->writes.size()));
  }
  const BufferNode* out = block->writes[0].buffer.get();
  std::optional<std::vector<int>> dim_of = point_dims(block, block->writes[0]);
  if (!dim_of) {
    throw incomplete(fmt::format("the write to {} is not at distinct spatial iteration variables", out->name));
  }
  bool has_reduce = false;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind == IterKind::kReduce) {
      has_reduce = true;
    } else if (iv.kind != IterKind::kSpatial) {
      throw incomplete(fmt::format("iteration variable '{}' is {}", iv.var.name(), kind_word(iv.kind)));
    } else if ((*dim_of)[i] < 0) {
      throw incomplete(fmt::format("spatial iteration variable '{}' does not index the output", iv.var.name()));
    }
  }
  if (has_reduce && !block->init.defined()) throw incomplete("the reduction has no init");
  if (reads_buffer(block, out)) throw incomplete(fmt::format("the block reads its own output {}", out->name));
  if (!is_const_int(realize->predicate, 1)) throw incomplete("the block is guarded by a predicate");
  auto site = removal_site(block_path);
  if (!site) throw incomplete("the block's loop nest is not an element of a sequence");
  // 4) not an output block.
  for (const Param& p : func_->params) {
    if (p.buffer.get() == out) {
      throw error(kKind, 4, "OutputBlock", block_operand,
                  fmt::format("the block writes the function parameter {}", out->name), at_block);
    }
  }
  // 5) every other reader of the output is a block of the scope under the loop; no other
  // block writes it.
  const auto scope_children = detail::child_block_realizes(Stmt(scope));
  const auto loop_children = detail::child_block_realizes(Stmt(loop));
  AllRealizes all;
  all.visit(func_->body);
  for (const BlockRealizeNode* r : all.result) {
    const BlockNode* other = r->block.get();
    if (other == block) continue;
    std::string why;
    if (writes_buffer(other, out)) {
      why = fmt::format("block '{}' also writes {}", other->name, out->name);
    } else if (reads_buffer(other, out) && !contains(loop_children, r)) {
      why = fmt::format("consumer '{}' is not {}", other->name,
                        contains(scope_children, r) ? "under the loop" : "in the block's scope");
    } else if (reads_buffer(other, out) && std::find(scope_children.begin(), scope_children.end(), r) <
                                               std::find(scope_children.begin(), scope_children.end(), realize)) {
      why = fmt::format("consumer '{}' runs before the block", other->name);
    }
    if (!why.empty()) throw error(kKind, 5, "NotAllConsumersUnderLoop", loop_operand, why, at_loop);
  }
  // 6) the blocks writing what the block reads run before it and are not under the loop.
  size_t self = 0;
  while (self < scope_children.size() && scope_children[self] != realize) ++self;
  for (size_t i = 0; i < scope_children.size(); ++i) {
    const BlockNode* other = scope_children[i]->block.get();
    if (other == block) continue;
    bool producer = std::any_of(block->reads.begin(), block->reads.end(),
                                [&](const BufferRegion& r) { return writes_buffer(other, r.buffer.get()); });
    if (!producer) continue;
    if (i > self || contains(loop_children, scope_children[i])) {
      throw error(kKind, 6, "ProducerNotBefore", block_operand,
                  fmt::format("block '{}' writes what the block reads and runs {}", other->name,
                              i > self ? "after it" : "under the loop"),
                  at_block);
    }
  }
  // 7) the position: no later than the first child of the loop that reads the output.
  const int64_t first_consumer =
      child_holding(loop, false, [&](const BlockNode* b) { return reads_buffer(b, out); })
          .value_or(static_cast<int64_t>(children_of(loop->body).size()));
  const int64_t position = index == -1 ? first_consumer : index == -2 ? 0 : index;
  if (position < 0 || position > first_consumer) {
    throw error(kKind, 7, "InvalidIndex", fmt::format("index {}", index),
                fmt::format("the block can go at positions 0 to {} of the loop's body (or -1, -2)", first_consumer),
                at_loop);
  }
  // 8) the consumed region has affine, bounded bounds; a shared (warp) copy also covers
  // what the other threads of the block (warp) read: relaxed over the thread-bound loops
  // at or above `loop` too.
  Analyzer analyzer = detail::analyzer_for(loop_path);
  analyzer.bind(loop->loop_var, Range{loop->min, loop->extent});
  std::string why;
  auto region = detail::accessed_region(loop, out, Access::kRead, analyzer, why);
  std::vector<const ForNode*> outer = detail::loops_above(loop_path);
  outer.push_back(loop);
  const RelaxMap threads = thread_relaxation(out->scope, outer, analyzer);
  for (size_t d = 0; region && !threads.empty() && d < region->size(); ++d) {
    auto lo = detail::relax((*region)[d].first, threads);
    auto hi = detail::relax((*region)[d].second, threads);
    if (!lo || !hi) {
      why = fmt::format("the region of {} is not affine in the thread-bound loops", out->name);
      region.reset();
    } else {
      // A bound that uses no thread-bound loop comes back as it was, already simplified.
      auto simplified = [&](const Expr& relaxed, const Expr& before) {
        return relaxed.same_as(before) ? before : analyzer.simplify(relaxed);
      };
      (*region)[d] = Interval{simplified(lo->first, (*region)[d].first), simplified(hi->second, (*region)[d].second)};
    }
  }
  std::optional<std::vector<Expr>> extents = region ? detail::covering_extents(*region, analyzer, why) : std::nullopt;
  if (!extents) throw error(kKind, 8, "NonAffineRegion", loop_operand, why, at_loop);

  return ComputeAtPlan{realize, loop, *site, std::move(*dim_of), std::move(*region), std::move(*extents),
                       std::move(analyzer), position};
}

void Schedule::check_compute_at(BlockRV block_rv, LoopRV loop_rv, int64_t index) const {
  resolve(block_rv, InstructionKind::ComputeAt, "block");  // first, as in compute_at
  if (std::optional<int64_t> mark = location_mark(symbols_, loop_rv)) {
    // As apply_location_mark: root always applies; inline is compute_inline's outcome.
    if (*mark == -1) return;
    Schedule inlined = copy();
    inlined.compute_inline(block_rv);
    return;
  }
  plan_compute_at(block_rv, loop_rv, index);
}

void Schedule::compute_at(BlockRV block_rv, LoopRV loop_rv, bool preserve_unit_loops, int64_t index) {
  constexpr InstructionKind kKind = InstructionKind::ComputeAt;
  resolve(block_rv, kKind, "block");  // before the marks: an unknown block fails first
  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(block_rv);
  inst.inputs.emplace_back(loop_rv);
  inst.attrs.emplace_back(preserve_unit_loops);
  inst.attrs.emplace_back(index);
  if (apply_location_mark(block_rv, loop_rv, inst)) return;
  ComputeAtPlan plan = plan_compute_at(block_rv, loop_rv, index);
  LoopNames names(plan.site.first);
  names.visit(func_->body);
  Stmt nest = regenerate(plan.realize, plan.dim_of, plan.region, plan.extents, plan.analyzer, preserve_unit_loops,
                         names.names);
  commit(move_nest(func_, plan.site.first, plan.site.second, plan.loop, plan.position, nest), std::move(inst));
}

// What reverse_compute_at's construction needs, once its preconditions hold.
struct Schedule::ReverseComputeAtPlan {
  const BlockRealizeNode* realize = nullptr;
  const ForNode* loop = nullptr;
  std::pair<const StmtNode*, const SeqStmtNode*> site;
  std::vector<int> dim_of;
  std::vector<Interval> region;
  std::vector<Expr> extents;
  Analyzer analyzer;
  int64_t position = 0;
};

// reverse_compute_at's preconditions 1 to 8 for a loop that is not a location mark, in
// order; the first that fails throws. Shared by reverse_compute_at and
// check_reverse_compute_at, so the check cannot drift from the primitive.
Schedule::ReverseComputeAtPlan Schedule::plan_reverse_compute_at(BlockRV block_rv, LoopRV loop_rv, int64_t index) const {
  constexpr InstructionKind kKind = InstructionKind::ReverseComputeAt;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  const std::string block_operand = fmt::format("block {}", rv_name(block_rv));
  const std::string loop_operand = fmt::format("loop {}", rv_name(loop_rv));
  const ErrorLocus at_block{nullptr, block->name};
  const ErrorLocus at_loop{loop->loop_var.get(), {}};

  // 1) same scope; 2) the loop is not an ancestor of the block.
  auto placed = place(func_, block, loop);
  if (const auto* failure = std::get_if<PlacementFailure>(&placed)) {
    throw error(kKind, failure->precondition, failure->error_name, loop_operand, failure->reason, at_loop);
  }
  const Placement& placement = std::get<Placement>(placed);
  const std::vector<const StmtNode*>& block_path = placement.block_path;
  const std::vector<const StmtNode*>& loop_path = placement.loop_path;
  const BlockNode* scope = placement.scope;
  const BlockRealizeNode* realize = placement.realize;
  // 3) complete: spatial only, one output, nothing else writes it.
  auto incomplete = [&](const std::string& why) {
    return error(kKind, 3, "NotCompleteBlock", block_operand, why, at_block);
  };
  if (block->writes.size() != 1) {
    throw incomplete(fmt::format("the block writes {} buffers, not one", block->writes.size()));
  }
  const BufferNode* out = block->writes[0].buffer.get();
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::kSpatial) {
      throw incomplete(fmt::format("iteration variable '{}' is {}", iv.var.name(), kind_word(iv.kind)));
    }
  }
  if (block->init.defined()) throw incomplete("the block has an init");
  if (reads_buffer(block, out)) throw incomplete(fmt::format("the block reads its own output {}", out->name));
  if (!is_const_int(realize->predicate, 1)) throw incomplete("the block is guarded by a predicate");
  auto site = removal_site(block_path);
  if (!site) throw incomplete("the block's loop nest is not an element of a sequence");
  // 4) the blocks writing what it reads: those of one buffer, read at distinct spatial
  // iteration variables, all under the loop; the others before the loop.
  const auto scope_children = detail::child_block_realizes(Stmt(scope));
  const auto loop_children = detail::child_block_realizes(Stmt(loop));
  size_t self = 0, loop_start = scope_children.size();
  for (size_t i = 0; i < scope_children.size(); ++i) {
    if (scope_children[i] == realize) self = i;
    if (contains(loop_children, scope_children[i])) loop_start = std::min(loop_start, i);
  }
  AllRealizes all;
  all.visit(func_->body);
  const BufferRegion* produced = nullptr;  // the read of the buffer produced under the loop
  for (const BufferRegion& read : block->reads) {
    bool under = false, elsewhere = false;
    std::string why;
    for (const BlockRealizeNode* r : all.result) {
      const BlockNode* other = r->block.get();
      if (other == block || !writes_buffer(other, read.buffer.get())) continue;
      auto at = std::find(scope_children.begin(), scope_children.end(), r);
      if (at == scope_children.end()) {
        why = fmt::format("producer '{}' is not in the block's scope", other->name);
      } else if (contains(loop_children, r)) {
        under = true;
        if (static_cast<size_t>(at - scope_children.begin()) > self) {
          why = fmt::format("producer '{}' runs after the block", other->name);
        }
      } else if (static_cast<size_t>(at - scope_children.begin()) > loop_start) {
        why = fmt::format("producer '{}' runs after the loop", other->name);
      }
      elsewhere |= !contains(loop_children, r);
    }
    if (why.empty() && under && elsewhere) {
      why = fmt::format("{} is written both under the loop and outside it", read.buffer->name);
    }
    if (why.empty() && under && produced != nullptr) {
      why = fmt::format("both {} and {} are produced under the loop", produced->buffer->name, read.buffer->name);
    }
    if (why.empty() && under) {
      produced = &read;
      if (!point_dims(block, read)) {
        why = fmt::format("the block reads {} other than at distinct spatial iteration variables", read.buffer->name);
      }
    }
    if (!why.empty()) throw error(kKind, 4, "NotAllProducersUnderLoop", loop_operand, why, at_loop);
  }
  if (produced == nullptr) {
    throw error(kKind, 4, "NotAllProducersUnderLoop", loop_operand,
                "no block under the loop writes what the block reads", at_loop);
  }
  const BufferNode* in = produced->buffer.get();
  // 5) the readers of its output run after it, not under the loop; nothing else writes it.
  for (const BlockRealizeNode* r : all.result) {
    const BlockNode* other = r->block.get();
    if (other == block) continue;
    std::string why;
    if (writes_buffer(other, out)) {
      why = fmt::format("block '{}' also writes {}", other->name, out->name);
    } else if (reads_buffer(other, out)) {
      auto at = std::find(scope_children.begin(), scope_children.end(), r);
      if (at == scope_children.end() || static_cast<size_t>(at - scope_children.begin()) < self ||
          contains(loop_children, r)) {
        why = fmt::format("consumer '{}' does not run after the block", other->name);
      }
    }
    if (!why.empty()) throw error(kKind, 5, "ConsumerNotAfter", block_operand, why, at_block);
  }
  // 6) the position: after the last child of the loop that writes the produced buffer.
  const int64_t count = static_cast<int64_t>(children_of(loop->body).size());
  const int64_t after_producer =
      child_holding(loop, true, [&](const BlockNode* b) { return writes_buffer(b, in); }).value_or(-1) + 1;
  const int64_t position = index == -1 ? count : index == -2 ? after_producer : index;
  if (position < after_producer || position > count) {
    throw error(kKind, 6, "InvalidIndex", fmt::format("index {}", index),
                fmt::format("the block can go at positions {} to {} of the loop's body (or -1, -2)", after_producer,
                            count),
                at_loop);
  }
  // 7) the loop and those above it do not feed a reduction writing the produced buffer:
  // its values are final at the end of each iteration.
  std::vector<const VarNode*> outer;
  for (const ForNode* f : detail::loops_above(loop_path)) outer.push_back(f->loop_var.get());
  outer.push_back(loop->loop_var.get());
  for (const BlockRealizeNode* r : loop_children) {
    const BlockNode* other = r->block.get();
    if (!writes_buffer(other, in)) continue;
    for (size_t i = 0; i < other->iter_vars.size(); ++i) {
      if (other->iter_vars[i].kind != IterKind::kSpatial && detail::uses_any_var(r->iter_values[i], outer)) {
        throw error(kKind, 7, "LoopFeedsReduction", loop_operand,
                    fmt::format("the loop feeds '{}' of block '{}': {} is not final after one iteration",
                                other->iter_vars[i].var.name(), other->name, in->name),
                    at_loop);
      }
    }
  }
  // 8) the produced region has affine, bounded bounds. Unlike compute_at, no relaxation
  // over thread-bound loops whatever the scope of the buffer read (TVM relaxes storage
  // scopes for compute_at only): a consumer of shared data moved under threadIdx must
  // read only what its own thread produced, or it would run before the other threads
  // have written the rest.
  Analyzer analyzer = detail::analyzer_for(loop_path);
  analyzer.bind(loop->loop_var, Range{loop->min, loop->extent});
  std::string why;
  auto region = detail::accessed_region(loop, in, Access::kWrite, analyzer, why);
  std::optional<std::vector<Expr>> extents = region ? detail::covering_extents(*region, analyzer, why) : std::nullopt;
  if (!extents) throw error(kKind, 8, "NonAffineRegion", loop_operand, why, at_loop);

  return ReverseComputeAtPlan{realize, loop, *site, *point_dims(block, *produced), std::move(*region),
                              std::move(*extents), std::move(analyzer), position};
}

void Schedule::check_reverse_compute_at(BlockRV block_rv, LoopRV loop_rv, int64_t index) const {
  resolve(block_rv, InstructionKind::ReverseComputeAt, "block");  // first, as in reverse_compute_at
  if (std::optional<int64_t> mark = location_mark(symbols_, loop_rv)) {
    // As apply_location_mark: root always applies; inline is reverse_compute_inline's outcome.
    if (*mark == -1) return;
    Schedule inlined = copy();
    inlined.reverse_compute_inline(block_rv);
    return;
  }
  plan_reverse_compute_at(block_rv, loop_rv, index);
}

void Schedule::reverse_compute_at(BlockRV block_rv, LoopRV loop_rv, bool preserve_unit_loops, int64_t index) {
  constexpr InstructionKind kKind = InstructionKind::ReverseComputeAt;
  resolve(block_rv, kKind, "block");  // before the marks: an unknown block fails first
  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(block_rv);
  inst.inputs.emplace_back(loop_rv);
  inst.attrs.emplace_back(preserve_unit_loops);
  inst.attrs.emplace_back(index);
  if (apply_location_mark(block_rv, loop_rv, inst)) return;
  ReverseComputeAtPlan plan = plan_reverse_compute_at(block_rv, loop_rv, index);
  LoopNames names(plan.site.first);
  names.visit(func_->body);
  Stmt nest = regenerate(plan.realize, plan.dim_of, plan.region, plan.extents, plan.analyzer, preserve_unit_loops,
                         names.names);
  commit(move_nest(func_, plan.site.first, plan.site.second, plan.loop, plan.position, nest), std::move(inst));
}

namespace detail {

std::vector<RandomVar> apply_compute_at(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                        const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::ComputeAt;
  expect_count(kKind, "inputs", inputs, 2);
  expect_count(kKind, "attrs", attrs, 2);
  sch.compute_at(block_arg(kKind, inputs[0]), loop_arg(kKind, inputs[1]), bool_arg(kKind, attrs[0]),
                 int_arg(kKind, attrs[1]));
  return {};
}

std::vector<RandomVar> apply_reverse_compute_at(Schedule& sch, const std::vector<Arg>& inputs,
                                                const std::vector<Arg>& attrs, const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::ReverseComputeAt;
  expect_count(kKind, "inputs", inputs, 2);
  expect_count(kKind, "attrs", attrs, 2);
  sch.reverse_compute_at(block_arg(kKind, inputs[0]), loop_arg(kKind, inputs[1]), bool_arg(kKind, attrs[0]),
                         int_arg(kKind, attrs[1]));
  return {};
}

}  // namespace detail
}  // namespace dragon::schedule
