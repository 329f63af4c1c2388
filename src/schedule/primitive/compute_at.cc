// compute_at and reverse_compute_at: move a producer (consumer) block under a loop of its
// consumers (producers) and regenerate its loops to cover, per iteration of that loop, the
// region the blocks below it read (write); the region analysis is in region_cover.h. Also
// the root and inline marks of SampleComputeLocation. Not the sampling itself (sampling.cc).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include <fmt/format.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"
#include "../plan_memo.h"
#include "region_cover.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct ComputeAtPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Moves the producer `block` under `loop` of its consumers, at position `index` of the
  // loop's body (-1: the last possible, right before the first child reading its output;
  // -2: the first). Its loops are regenerated (ax0, ax1, ...), one per iteration variable,
  // spatial ones covering the region of its output that the blocks under `loop` read in
  // one iteration (indices relaxed over the loops below `loop`), reduce ones their whole
  // domain; a predicate keeps it inside that region and its domain when the covered extent
  // is only bounded. A shared (warp) copy also covers what the other threads (lanes) of the
  // block read: threadIdx and vthread (threadIdx.x) loops above `loop` are relaxed too.
  // Unit loops are dropped unless preserve_unit_loops.
  // Requires:
  //   1) the block is not the root and `loop` is in its scope (NotInSameScope)
  //   2) the loop is not an ancestor of the block (LoopIsAncestor)
  //   3) the block is complete or a reduction with init: spatial and reduce iteration
  //      variables, one output written at distinct spatial ones, no self-read, no
  //      predicate, its loop nest an element of a sequence (NotCompleteOrReduction)
  //   4) it does not write a function parameter (OutputBlock)
  //   5) every other block reading its output is a block of the scope under `loop` that
  //      runs after it, and no other block writes it (NotAllConsumersUnderLoop)
  //   6) the blocks writing what it reads run before it and not under `loop`
  //      (ProducerNotBefore)
  //   7) index is -1, -2 or a position no later than the first child reading its output
  //      (InvalidIndex)
  //   8) the consumers' read indices are affine (with floordiv/floormod by constants) in
  //      the loops below `loop`, with bounded extents (NonAffineRegion).
  void compute_at(BlockRV block, LoopRV loop, bool preserve_unit_loops = true, int64_t index = -1);
  // compute_at's outcome without building the new IR: throws the ScheduleError compute_at
  // would throw (same preconditions, same order), returns when it would apply. For a
  // search that only needs to know whether compute_at applies (the script decoder).
  // preserve_unit_loops only shapes the new loops, so it is not an operand here.
  void check_compute_at(BlockRV block, LoopRV loop, int64_t index = -1) const;
  // Moves the consumer `block` under `loop` of its producers, at position `index` of the
  // loop's body (-1: the last; -2: the first possible, right after the last child writing
  // what it reads). Its loops are regenerated as compute_at's, its iteration variables
  // covering the region of the buffer that the blocks under `loop` write in one iteration.
  // Requires:
  //   1) the block is not the root and `loop` is in its scope (NotInSameScope)
  //   2) the loop is not an ancestor of the block (LoopIsAncestor)
  //   3) the block is complete: spatial iteration variables, one output, no init, no
  //      self-read, no predicate, its loop nest an element of a sequence (NotCompleteBlock)
  //   4) of the buffers it reads, exactly one is written under `loop`, only there, before
  //      the block, and read at distinct spatial iteration variables; the others' writers
  //      run before `loop` (NotAllProducersUnderLoop)
  //   5) the readers of its output run after it, not under `loop`; no other block writes
  //      it (ConsumerNotAfter)
  //   6) index is -1, -2 or a position after the last child writing what it reads
  //      (InvalidIndex)
  //   7) neither `loop` nor a loop above it feeds a reduce iteration variable of a block
  //      writing that buffer under `loop` (LoopFeedsReduction)
  //   8) the producers' write indices are affine in the loops below `loop`, with bounded
  //      extents (NonAffineRegion).
  void reverse_compute_at(BlockRV block, LoopRV loop, bool preserve_unit_loops = true, int64_t index = -1);
  // reverse_compute_at's outcome without building the new IR: throws the ScheduleError
  // reverse_compute_at would throw (same preconditions, same order), returns when it
  // would apply. For a search that only needs to know whether it applies (the script
  // decoder); preserve_unit_loops only shapes the new loops, so it is not an operand here.
  void check_reverse_compute_at(BlockRV block, LoopRV loop, int64_t index = -1) const;
  CheckResult check_placement(const detail::CheckedOperands& ops) const;  // (reverse_)compute_at
  CheckResult check_compute_inline(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  // compute_at's preconditions for a loop that is not a location mark (nullopt: unknown).
  detail::Planned<detail::ComputeAtPlan> plan_compute_at(BlockRV block, std::optional<LoopRV> loop,
                                                         std::optional<int64_t> index) const;
  detail::Planned<detail::ComputeAtPlan> plan_reverse_compute_at(BlockRV block, std::optional<LoopRV> loop,
                                                                 std::optional<int64_t> index) const;
  // Whether compute_at of `block` at `loop` (with index -1) would apply.
  bool compute_at_applies(const ir::BlockNode* block, const ir::ForNode* loop) const;
  // When `loop` is one of SampleComputeLocation's marks, applies it for ComputeAt or
  // ReverseComputeAt (`inst`): root records `inst` and changes nothing, inline runs
  // (reverse_)compute_inline with its preconditions and records `inst`. False otherwise.
  bool apply_location_mark(BlockRV block, LoopRV loop, Instruction& inst);
#endif

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
    // Simplified once cast, so a constant region of another index type (an i64 gather's
    // 20 rows under i32 iterators) stays a constant extent: Split and the unit-loop test
    // below read constants, not i32(20i64).
    if (!(lo.dtype() == type)) lo = analyzer.simplify(cast(type, lo));
    if (!(extent.dtype() == type)) extent = analyzer.simplify(cast(type, extent));
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
std::optional<std::pair<const StmtNode*, const SeqStmtNode*>> removal_site(const BlockTree& tree,
                                                                           const BlockRealizeNode* realize) {
  const StmtNode* removed = realize;
  const StmtNode* at = tree.parent(realize);
  while (at != nullptr && at->kind == NodeKind::For && static_cast<const ForNode*>(at)->body.get() == removed) {
    removed = at;
    at = tree.parent(at);
  }
  if (at == nullptr || at->kind != NodeKind::SeqStmt) return std::nullopt;
  return std::make_pair(removed, static_cast<const SeqStmtNode*>(at));
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
  std::optional<int64_t> mark = location_mark(loop_rv);
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

// What compute_at's and reverse_compute_at's construction needs, once their
// preconditions hold.
struct detail::ComputeAtPlan {
  const BlockRealizeNode* realize = nullptr;
  const ForNode* loop = nullptr;
  std::pair<const StmtNode*, const SeqStmtNode*> site;
  std::vector<int> dim_of;
  std::vector<Interval> region;
  std::vector<Expr> extents;
  Analyzer analyzer;
  int64_t position = 0;
};

namespace {

// What the plans below read, and how their errors name the operands.
struct PlacementContext {
  InstructionKind kind;
  const PrimFunc& func;
  const BlockTree& tree;
  detail::PlanMemo& memo;        // precondition 8's analyses, shared with the schedule's copies
  bool explain;                  // whether errors get their text
  std::optional<BlockRV> block;  // the operands as errors name them
  std::optional<LoopRV> loop;
  std::string block_operand() const { return block ? fmt::format("block {}", rv_name(*block)) : "block"; }
  std::string loop_operand() const { return loop ? fmt::format("loop {}", rv_name(*loop)) : "loop"; }
  template <typename Operand, typename Reason>
  ScheduleError error(int k, std::string name, const Operand& operand, const Reason& reason, ErrorLocus locus) const {
    if (!explain) return ScheduleError(kind, k, std::move(name));
    return ScheduleError(kind, k, std::move(name), detail::text_of(operand), detail::text_of(reason), func,
                         std::move(locus));
  }
};

// The blocks directly in `scope` (realizations, in program order), and those of them
// under `loop` (none when it is null).
std::pair<std::vector<const BlockRealizeNode*>, std::vector<const BlockRealizeNode*>> scope_and_loop_children(
    const BlockTree& tree, const BlockNode* scope, const ForNode* loop) {
  std::pair<std::vector<const BlockRealizeNode*>, std::vector<const BlockRealizeNode*>> out;
  for (const BlockTree::BlockInfo& b : tree.blocks()) {
    if (b.scope != scope || b.realize == nullptr) continue;
    out.first.push_back(b.realize);
    const auto loops = b.scope_loops();
    if (loop != nullptr && std::find(loops.begin(), loops.end(), loop) != loops.end()) out.second.push_back(b.realize);
  }
  return out;
}

// Preconditions 1 and 2 of both primitives: the block is not the root and the loop is in
// its scope, not above it. The block's scope block, or the error.
detail::Planned<const BlockNode*> place(const PlacementContext& c, const BlockNode* block, const ForNode* loop) {
  const BlockTree::BlockInfo& info = *c.tree.find(block);
  const ErrorLocus at_loop{loop != nullptr ? loop->loop_var.get() : nullptr, {}};
  // 1) same scope.
  if (info.scope == nullptr)
    return c.error(
        1, "NotInSameScope", [&] { return c.loop_operand(); }, "the block is the root block", at_loop);
  if (loop == nullptr) return info.scope;
  if (c.tree.find(loop)->scope != info.scope) {
    return c.error(
        1, "NotInSameScope", [&] { return c.loop_operand(); },
        [&] { return fmt::format("the loop is not in the scope of block '{}'", info.scope->name); }, at_loop);
  }
  // 2) the loop is not an ancestor of the block.
  if (std::find(info.loops.begin(), info.loops.end(), loop) != info.loops.end()) {
    return c.error(
        2, "LoopIsAncestor", [&] { return c.loop_operand(); },
        [&] { return fmt::format("the loop already contains block '{}'", block->name); }, at_loop);
  }
  return info.scope;
}

// The analyzer of the loops above `loop` in its scope and of `loop` itself, and those
// loops (outermost first, `loop` last).
std::pair<Analyzer, std::vector<const ForNode*>> loops_at(const BlockTree& tree, const ForNode* loop) {
  const std::span<const ForNode* const> above = tree.find(loop)->scope_loops;
  std::vector<const ForNode*> loops(above.begin(), above.end());
  loops.push_back(loop);
  Analyzer analyzer;
  for (const ForNode* l : loops) analyzer.bind(l->loop_var, Range{l->min, l->extent});
  return {std::move(analyzer), std::move(loops)};
}

// Precondition 8's analysis: the region of a buffer the blocks under a loop read
// (compute_at, relaxed over the thread-bound loops its storage scope shares) or write
// (reverse_compute_at) and the extents covering it, or why there are none.
struct CoveredRegion {
  std::optional<std::vector<Interval>> region;
  std::optional<std::vector<Expr>> extents;
  std::string why;
  // What the key names (held, so that no later node can take an address while the entry
  // lives): the loops and the buffer.
  std::vector<Stmt> loops;
  Buffer buffer;
};

// Names these analyses in a plan memo.
const char kCoveredRegionTag = 0;

// The analysis for `buffer` under the last of `loops` (the loops of its scope above it
// and itself, outermost first, which `analyzer` knows), remembered in `memo` by the nodes
// it reads: the loops (their bounds, and the statements below the last) and the buffer
// (its storage scope). Whatever else the function holds does not change it.
std::shared_ptr<const CoveredRegion> covered_region(detail::PlanMemo& memo, const std::vector<const ForNode*>& loops,
                                                    const BufferNode* buffer, Access access,
                                                    const Analyzer& analyzer) {
  detail::PlanMemo::Key key{&kCoveredRegionTag, reinterpret_cast<const void*>(static_cast<uintptr_t>(access)),
                            reinterpret_cast<const void*>(loops.size()), buffer};
  for (const ForNode* l : loops) key.push_back(l);
  if (auto known = memo.find(key)) return std::static_pointer_cast<const CoveredRegion>(known);
  auto result = std::make_shared<CoveredRegion>();
  for (const ForNode* l : loops) result->loops.emplace_back(l);
  result->buffer = Buffer(buffer);
  std::string& why = result->why;
  const ForNode* loop = loops.back();
  auto region = detail::accessed_region(loop, buffer, access, analyzer, why);
  if (access == Access::kRead) {
    // A shared (warp) copy also covers what the other threads of the block (warp) read:
    // relaxed over the thread-bound loops at or above `loop` too.
    const RelaxMap threads = thread_relaxation(buffer->scope, loops, analyzer);
    for (size_t d = 0; region && !threads.empty() && d < region->size(); ++d) {
      auto lo = detail::relax((*region)[d].first, threads);
      auto hi = detail::relax((*region)[d].second, threads);
      if (!lo || !hi) {
        why = fmt::format("the region of {} is not affine in the thread-bound loops", buffer->name);
        region.reset();
      } else {
        // A bound that uses no thread-bound loop comes back as it was, already simplified.
        auto simplified = [&](const Expr& relaxed, const Expr& before) {
          return relaxed.same_as(before) ? before : analyzer.simplify(relaxed);
        };
        (*region)[d] =
            Interval{simplified(lo->first, (*region)[d].first), simplified(hi->second, (*region)[d].second)};
      }
    }
  }
  if (region) result->extents = detail::covering_extents(*region, analyzer, why);
  result->region = std::move(region);
  memo.remember(std::move(key), result, {});
  return result;
}

// compute_at's preconditions 1 to 8 for `block` at `loop`, a loop that is not a location
// mark, in order. An unknown loop (null) or index leaves out the preconditions that read
// it: then only 1 (the root), 3 and 4 are checked without the loop.
detail::Planned<detail::ComputeAtPlan> plan_compute_at_loop(const PlacementContext& c, const BlockNode* block,
                                                            const ForNode* loop, std::optional<int64_t> index) {
  const ErrorLocus at_block{nullptr, block->name};
  const ErrorLocus at_loop{loop != nullptr ? loop->loop_var.get() : nullptr, {}};
  // 1) same scope; 2) the loop is not an ancestor of the block.
  auto placed = place(c, block, loop);
  if (!placed.ok()) return std::move(placed).take_error();
  const BlockNode* scope = *placed;
  const BlockRealizeNode* realize = c.tree.find(block)->realize;
  // 3) complete (spatial) or a reduction with an init, writing one buffer at its
  // spatial iteration variables.
  auto incomplete = [&](const auto& why) {
    return c.error(
        3, "NotCompleteOrReduction", [&] { return c.block_operand(); }, why, at_block);
  };
  if (block->writes.size() != 1) {
    return incomplete([&] { return fmt::format("the block writes {} buffers, not one", block->writes.size()); });
  }
  const BufferNode* out = block->writes[0].buffer.get();
  std::optional<std::vector<int>> dim_of = point_dims(block, block->writes[0]);
  if (!dim_of) {
    return incomplete(
        [&] { return fmt::format("the write to {} is not at distinct spatial iteration variables", out->name); });
  }
  bool has_reduce = false;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv.kind == IterKind::kReduce) {
      has_reduce = true;
    } else if (iv.kind != IterKind::kSpatial) {
      return incomplete(
          [&] { return fmt::format("iteration variable '{}' is {}", iv.var.name(), kind_word(iv.kind)); });
    } else if ((*dim_of)[i] < 0) {
      return incomplete(
          [&] { return fmt::format("spatial iteration variable '{}' does not index the output", iv.var.name()); });
    }
  }
  if (has_reduce && !block->init.defined()) return incomplete("the reduction has no init");
  if (reads_buffer(block, out))
    return incomplete([&] { return fmt::format("the block reads its own output {}", out->name); });
  if (!is_const_int(realize->predicate, 1)) return incomplete("the block is guarded by a predicate");
  auto site = removal_site(c.tree, realize);
  if (!site) return incomplete("the block's loop nest is not an element of a sequence");
  // 4) not an output block.
  for (const Param& p : c.func->params) {
    if (p.buffer.get() == out) {
      return c.error(
          4, "OutputBlock", [&] { return c.block_operand(); },
          [&] { return fmt::format("the block writes the function parameter {}", out->name); }, at_block);
    }
  }
  detail::ComputeAtPlan plan;
  if (loop == nullptr) return plan;  // the rest reads the loop
  // 5) every other reader of the output is a block of the scope under the loop; no other
  // block writes it.
  const auto [scope_children, loop_children] = scope_and_loop_children(c.tree, scope, loop);
  for (const BlockTree::BlockInfo& info : c.tree.blocks()) {
    const BlockRealizeNode* r = info.realize;
    const BlockNode* other = info.block;
    if (r == nullptr || other == block) continue;
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
    if (!why.empty())
      return c.error(
          5, "NotAllConsumersUnderLoop", [&] { return c.loop_operand(); }, why, at_loop);
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
      return c.error(
          6, "ProducerNotBefore", [&] { return c.block_operand(); },
          [&] {
            return fmt::format("block '{}' writes what the block reads and runs {}", other->name,
                               i > self ? "after it" : "under the loop");
          },
          at_block);
    }
  }
  // 7) the position: no later than the first child of the loop that reads the output.
  const int64_t first_consumer =
      child_holding(loop, false, [&](const BlockNode* b) { return reads_buffer(b, out); })
          .value_or(static_cast<int64_t>(children_of(loop->body).size()));
  const int64_t position = !index || *index == -1 ? first_consumer : *index == -2 ? 0 : *index;
  if (position < 0 || position > first_consumer) {
    return c.error(
        7, "InvalidIndex", [&] { return fmt::format("index {}", *index); },
        [&] {
          return fmt::format("the block can go at positions 0 to {} of the loop's body (or -1, -2)", first_consumer);
        },
        at_loop);
  }
  // 8) the consumed region has affine, bounded bounds; a shared (warp) copy also covers
  // what the other threads of the block (warp) read: relaxed over the thread-bound loops
  // at or above `loop` too.
  // Named members, not a structured binding: clang 14 (the fuzz build) cannot capture a
  // binding in the lambda below.
  std::pair<Analyzer, std::vector<const ForNode*>> at = loops_at(c.tree, loop);
  Analyzer& analyzer = at.first;
  const std::shared_ptr<const CoveredRegion> covered = covered_region(c.memo, at.second, out, Access::kRead, analyzer);
  if (!covered->extents)
    return c.error(
        8, "NonAffineRegion", [&] { return c.loop_operand(); }, covered->why, at_loop);
  return detail::ComputeAtPlan{
      realize, loop, *site, std::move(*dim_of), *covered->region, *covered->extents, std::move(analyzer), position};
}

// reverse_compute_at's preconditions 1 to 8 for `block` at `loop`, a loop that is not a
// location mark, in order. An unknown loop (null) or index leaves out the preconditions
// that read it: then only 1 (the root) and 3 are checked without the loop.
detail::Planned<detail::ComputeAtPlan> plan_reverse_compute_at_loop(const PlacementContext& c, const BlockNode* block,
                                                                    const ForNode* loop, std::optional<int64_t> index) {
  const ErrorLocus at_block{nullptr, block->name};
  const ErrorLocus at_loop{loop != nullptr ? loop->loop_var.get() : nullptr, {}};
  // 1) same scope; 2) the loop is not an ancestor of the block.
  auto placed = place(c, block, loop);
  if (!placed.ok()) return std::move(placed).take_error();
  const BlockNode* scope = *placed;
  const BlockRealizeNode* realize = c.tree.find(block)->realize;
  // 3) complete: spatial only, one output, nothing else writes it.
  auto incomplete = [&](const auto& why) {
    return c.error(
        3, "NotCompleteBlock", [&] { return c.block_operand(); }, why, at_block);
  };
  if (block->writes.size() != 1) {
    return incomplete([&] { return fmt::format("the block writes {} buffers, not one", block->writes.size()); });
  }
  const BufferNode* out = block->writes[0].buffer.get();
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::kSpatial) {
      return incomplete(
          [&] { return fmt::format("iteration variable '{}' is {}", iv.var.name(), kind_word(iv.kind)); });
    }
  }
  if (block->init.defined()) return incomplete("the block has an init");
  if (reads_buffer(block, out))
    return incomplete([&] { return fmt::format("the block reads its own output {}", out->name); });
  if (!is_const_int(realize->predicate, 1)) return incomplete("the block is guarded by a predicate");
  auto site = removal_site(c.tree, realize);
  if (!site) return incomplete("the block's loop nest is not an element of a sequence");
  detail::ComputeAtPlan plan;
  if (loop == nullptr) return plan;  // the rest reads the loop
  // 4) the blocks writing what it reads: those of one buffer, read at distinct spatial
  // iteration variables, all under the loop; the others before the loop.
  const auto [scope_children, loop_children] = scope_and_loop_children(c.tree, scope, loop);
  size_t self = 0, loop_start = scope_children.size();
  for (size_t i = 0; i < scope_children.size(); ++i) {
    if (scope_children[i] == realize) self = i;
    if (contains(loop_children, scope_children[i])) loop_start = std::min(loop_start, i);
  }
  const BufferRegion* produced = nullptr;  // the read of the buffer produced under the loop
  for (const BufferRegion& read : block->reads) {
    bool under = false, elsewhere = false;
    std::string why;
    for (const BlockTree::BlockInfo& info : c.tree.blocks()) {
      const BlockRealizeNode* r = info.realize;
      const BlockNode* other = info.block;
      if (r == nullptr || other == block || !writes_buffer(other, read.buffer.get())) continue;
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
    if (!why.empty())
      return c.error(
          4, "NotAllProducersUnderLoop", [&] { return c.loop_operand(); }, why, at_loop);
  }
  if (produced == nullptr) {
    return c.error(
        4, "NotAllProducersUnderLoop", [&] { return c.loop_operand(); },
        "no block under the loop writes what the block reads", at_loop);
  }
  const BufferNode* in = produced->buffer.get();
  // 5) the readers of its output run after it, not under the loop; nothing else writes it.
  for (const BlockTree::BlockInfo& info : c.tree.blocks()) {
    const BlockRealizeNode* r = info.realize;
    const BlockNode* other = info.block;
    if (r == nullptr || other == block) continue;
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
    if (!why.empty())
      return c.error(
          5, "ConsumerNotAfter", [&] { return c.block_operand(); }, why, at_block);
  }
  // 6) the position: after the last child of the loop that writes the produced buffer.
  const int64_t count = static_cast<int64_t>(children_of(loop->body).size());
  const int64_t after_producer =
      child_holding(loop, true, [&](const BlockNode* b) { return writes_buffer(b, in); }).value_or(-1) + 1;
  const int64_t position = !index || *index == -1 ? count : *index == -2 ? after_producer : *index;
  if (position < after_producer || position > count) {
    return c.error(
        6, "InvalidIndex", [&] { return fmt::format("index {}", *index); },
        [&] {
          return fmt::format("the block can go at positions {} to {} of the loop's body (or -1, -2)", after_producer,
                             count);
        },
        at_loop);
  }
  // 7) the loop and those above it do not feed a reduction writing the produced buffer:
  // its values are final at the end of each iteration. A scan's ordered variable may be
  // fed when it indexes a dimension of what the scan writes: each iteration then writes its
  // own element once, from elements written before it, so the element is final when written
  // (a scan staged in chunks copies each chunk out after computing it).
  std::vector<const VarNode*> outer;
  for (const ForNode* f : c.tree.find(loop)->scope_loops) outer.push_back(f->loop_var.get());
  outer.push_back(loop->loop_var.get());
  auto indexes_a_written_dimension = [&](const BlockNode* writer, const IterVar& iv) {
    if (iv.kind != IterKind::kOrdered) return false;
    for (const BufferRegion& w : writer->writes) {
      if (w.buffer.get() != in) continue;
      for (const Range& r : w.region) {
        if (r.min.same_as(iv.var) && is_const_int(r.extent, 1)) return true;
      }
    }
    return false;
  };
  for (const BlockRealizeNode* r : loop_children) {
    const BlockNode* other = r->block.get();
    if (!writes_buffer(other, in)) continue;
    for (size_t i = 0; i < other->iter_vars.size(); ++i) {
      if (other->iter_vars[i].kind != IterKind::kSpatial && !indexes_a_written_dimension(other, other->iter_vars[i]) &&
          detail::uses_any_var(r->iter_values[i], outer)) {
        return c.error(
            7, "LoopFeedsReduction", [&] { return c.loop_operand(); },
            [&] {
              return fmt::format("the loop feeds '{}' of block '{}': {} is not final after one iteration",
                                 other->iter_vars[i].var.name(), other->name, in->name);
            },
            at_loop);
      }
    }
  }
  // 8) the produced region has affine, bounded bounds. Unlike compute_at, no relaxation
  // over thread-bound loops whatever the scope of the buffer read (TVM relaxes storage
  // scopes for compute_at only): a consumer of shared data moved under threadIdx must
  // read only what its own thread produced, or it would run before the other threads
  // have written the rest.
  std::pair<Analyzer, std::vector<const ForNode*>> at = loops_at(c.tree, loop);
  Analyzer& analyzer = at.first;
  const std::shared_ptr<const CoveredRegion> covered = covered_region(c.memo, at.second, in, Access::kWrite, analyzer);
  if (!covered->extents)
    return c.error(
        8, "NonAffineRegion", [&] { return c.loop_operand(); }, covered->why, at_loop);
  return detail::ComputeAtPlan{
      realize, loop, *site, *point_dims(block, *produced), *covered->region, *covered->extents, std::move(analyzer),
      position};
}

}  // namespace

detail::Planned<detail::ComputeAtPlan> Schedule::plan_compute_at(BlockRV block_rv, std::optional<LoopRV> loop_rv,
                                                                 std::optional<int64_t> index) const {
  constexpr InstructionKind kKind = InstructionKind::ComputeAt;
  auto block = find(block_rv, kKind, "block");
  if (!block.ok()) return std::move(block).take_error();
  const ForNode* loop = nullptr;
  if (loop_rv) {
    auto found = find(*loop_rv, kKind, "loop");
    if (!found.ok()) return std::move(found).take_error();
    loop = *found;
  }
  const PlacementContext c{kKind, func_, *tree_, *memo_, explain_, block_rv, loop_rv};
  return plan_compute_at_loop(c, *block, loop, index);
}

detail::Planned<detail::ComputeAtPlan> Schedule::plan_reverse_compute_at(BlockRV block_rv,
                                                                         std::optional<LoopRV> loop_rv,
                                                                         std::optional<int64_t> index) const {
  constexpr InstructionKind kKind = InstructionKind::ReverseComputeAt;
  auto block = find(block_rv, kKind, "block");
  if (!block.ok()) return std::move(block).take_error();
  const ForNode* loop = nullptr;
  if (loop_rv) {
    auto found = find(*loop_rv, kKind, "loop");
    if (!found.ok()) return std::move(found).take_error();
    loop = *found;
  }
  const PlacementContext c{kKind, func_, *tree_, *memo_, explain_, block_rv, loop_rv};
  return plan_reverse_compute_at_loop(c, *block, loop, index);
}

bool Schedule::compute_at_applies(const BlockNode* block, const ForNode* loop) const {
  const PlacementContext c{InstructionKind::ComputeAt, func_, *tree_, *memo_, false, std::nullopt, std::nullopt};
  return plan_compute_at_loop(c, block, loop, -1).ok();
}

void Schedule::check_compute_at(BlockRV block_rv, LoopRV loop_rv, int64_t index) const {
  resolve(block_rv, InstructionKind::ComputeAt, "block");  // first, as in compute_at
  if (std::optional<int64_t> mark = location_mark(loop_rv)) {
    // As apply_location_mark: root always applies; inline is compute_inline's outcome.
    if (*mark == -2) {
      CheckResult inlined = check_inline(InstructionKind::ComputeInline, block_rv);
      if (inlined.error) throw *inlined.error;
    }
    return;
  }
  plan_compute_at(block_rv, loop_rv, index).take();
}

void Schedule::check_reverse_compute_at(BlockRV block_rv, LoopRV loop_rv, int64_t index) const {
  resolve(block_rv, InstructionKind::ReverseComputeAt, "block");  // first, as in reverse_compute_at
  if (std::optional<int64_t> mark = location_mark(loop_rv)) {
    // As apply_location_mark: root always applies; inline is reverse_compute_inline's outcome.
    if (*mark == -2) {
      CheckResult inlined = check_inline(InstructionKind::ReverseComputeInline, block_rv);
      if (inlined.error) throw *inlined.error;
    }
    return;
  }
  plan_reverse_compute_at(block_rv, loop_rv, index).take();
}

void Schedule::compute_at(BlockRV block_rv, LoopRV loop_rv, bool preserve_unit_loops, int64_t index) {
  constexpr InstructionKind kKind = InstructionKind::ComputeAt;
  resolve(block_rv, kKind, "block");  // before the marks: an unknown block fails first
  Instruction inst = detail::make_instruction(kKind, {}, block_rv, loop_rv, preserve_unit_loops, index);
  if (apply_location_mark(block_rv, loop_rv, inst)) return;
  detail::ComputeAtPlan plan = plan_compute_at(block_rv, loop_rv, index).take();
  LoopNames names(plan.site.first);
  names.visit(func_->body);
  Stmt nest =
      regenerate(plan.realize, plan.dim_of, plan.region, plan.extents, plan.analyzer, preserve_unit_loops, names.names);
  commit(move_nest(func_, plan.site.first, plan.site.second, plan.loop, plan.position, nest), std::move(inst));
}

void Schedule::reverse_compute_at(BlockRV block_rv, LoopRV loop_rv, bool preserve_unit_loops, int64_t index) {
  constexpr InstructionKind kKind = InstructionKind::ReverseComputeAt;
  resolve(block_rv, kKind, "block");  // before the marks: an unknown block fails first
  Instruction inst = detail::make_instruction(kKind, {}, block_rv, loop_rv, preserve_unit_loops, index);
  if (apply_location_mark(block_rv, loop_rv, inst)) return;
  detail::ComputeAtPlan plan = plan_reverse_compute_at(block_rv, loop_rv, index).take();
  LoopNames names(plan.site.first);
  names.visit(func_->body);
  Stmt nest = regenerate(plan.realize, plan.dim_of, plan.region, plan.extents, plan.analyzer, preserve_unit_loops,
                         names.names);
  commit(move_nest(func_, plan.site.first, plan.site.second, plan.loop, plan.position, nest), std::move(inst));
}

// check() of both primitives: a location mark as apply_location_mark takes it, else the
// plan. With the loop unknown, a schedule holding marks is undecided (the root mark
// applies to any block).
CheckResult Schedule::check_placement(const detail::CheckedOperands& ops) const {
  const InstructionKind kind = ops.kind();
  const bool reverse = kind == InstructionKind::ReverseComputeAt;
  ops.expect(2, 2);
  auto block = ops.block(0);
  auto loop = ops.loop(1);
  ops.bool_attr(0);  // preserve_unit_loops: only shapes the new loops
  auto index = ops.int_attr(1);
  if (!block) return detail::unknown();
  auto found = find(*block, kind, "block");
  if (!found.ok()) return detail::verdict(std::move(found), true);
  if (!loop) {
    if (has_location_marks()) return detail::unknown();
    return reverse ? detail::verdict(plan_reverse_compute_at(*block, std::nullopt, index), false)
                   : detail::verdict(plan_compute_at(*block, std::nullopt, index), false);
  }
  if (std::optional<int64_t> mark = location_mark(*loop)) {
    if (*mark == -1) return CheckResult{Verdict::kApplies, std::nullopt, 0, std::nullopt};
    return check_inline(reverse ? InstructionKind::ReverseComputeInline : InstructionKind::ComputeInline, *block);
  }
  return reverse ? detail::verdict(plan_reverse_compute_at(*block, *loop, index), index.has_value())
                 : detail::verdict(plan_compute_at(*block, *loop, index), index.has_value());
}

namespace detail {

// ComputeAt and ReverseComputeAt share their layout.
constexpr auto kComputeAtSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::input("loop", ValueType::kLoop),
    slot::attr("preserve_unit_loops", ValueType::kBool).defaults_to(true),
    slot::attr("index", ValueType::kInt).defaults_to(int64_t{-1}),
});

constinit const InstructionSignature kComputeAtSignature{
    .python_name = "compute_at",
    .slots = kComputeAtSlots,
    .replay = replay_method<&Schedule::compute_at>,
    .check = check_method<&Schedule::check_placement>,
};

constinit const InstructionSignature kReverseComputeAtSignature{
    .python_name = "reverse_compute_at",
    .slots = kComputeAtSlots,
    .replay = replay_method<&Schedule::reverse_compute_at>,
    .check = check_method<&Schedule::check_placement>,
};

}  // namespace detail
}  // namespace dragon::schedule
