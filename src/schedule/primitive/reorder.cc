// reorder: permutes loops of one perfectly nested chain. Bindings need no rewrite (loop
// variables keep their identity); only the nesting order changes.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct ReorderPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Puts `loops` in the given order, in the positions they occupy now; other loops of
  // the chain keep their places.
  // Requires:
  //   1) no loop is given twice (DuplicateLoop)
  //   2) the loops lie on one chain in which each loop from the outermost to the
  //      innermost given has exactly one child, the next loop (NotSingleBranchChain)
  //   3) no loop's bounds use a loop that would be inside it (DependentLoopDomain)
  //   4) loops whose order a block below depends on keep their relative order: those
  //      feeding an ordered or opaque iteration variable, and those feeding a reduce
  //      variable when one of the two also feeds a spatial one (a fused
  //      spatial-and-reduce loop, where a reorder could run an update before its init)
  //      (IterationOrderChanged).
  void reorder(const std::vector<LoopRV>& loops);
  CheckResult check_reorder(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::ReorderPlan> plan_reorder(std::span<const LoopRV> loops) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// The transformation itself: the same loops (variables, bounds, kinds, annotations)
// around `body`, outermost first in `order`.
Stmt nest_in_order(const std::vector<const ForNode*>& order, Stmt body) {
  for (size_t p = order.size(); p-- > 0;) {
    const ForNode* l = order[p];
    body = ForNode::make(l->loop_var, l->min, l->extent, l->for_kind, body, l->thread_tag, l->annotations);
  }
  return body;
}

// Collects the variables an expression mentions (once found, a variable is not listed
// again: bindings are small).
class VarCollector : public ExprVisitor {
 public:
  explicit VarCollector(std::vector<const VarNode*>& out) : out_(out) {}

 protected:
  void visit_(const VarNode* op) override {
    if (std::find(out_.begin(), out_.end(), op) == out_.end()) out_.push_back(op);
  }
  using ExprVisitor::visit_;

 private:
  std::vector<const VarNode*>& out_;
};

}  // namespace

// What reorder's construction needs: the chain of loops from the outermost given one to
// the innermost, and the same loops in their new order (empty for fewer than two loops:
// nothing moves).
struct detail::ReorderPlan {
  std::vector<const ForNode*> chain;
  std::vector<const ForNode*> order;
};

detail::Planned<detail::ReorderPlan> Schedule::plan_reorder(std::span<const LoopRV> loop_rvs) const {
  constexpr InstructionKind kKind = InstructionKind::Reorder;
  std::vector<const ForNode*> loops;
  for (LoopRV rv : loop_rvs) {
    auto loop = find(rv, kKind, "loop");
    if (!loop.ok()) return std::move(loop).take_error();
    loops.push_back(*loop);
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (loops[i] == loops[j]) {
        return error(
            kKind, 1, "DuplicateLoop", [&] { return fmt::format("loop {}", rv_name(loop_rvs[i])); },
            [&] {
              return fmt::format("the loop is given twice (as {} and {})", rv_name(loop_rvs[j]), rv_name(loop_rvs[i]));
            },
            ErrorLocus{loops[i]->loop_var.get(), {}});
      }
    }
  }
  detail::ReorderPlan plan;
  if (loops.size() <= 1) return plan;
  // The deepest loop's path must hold every other loop, and the part of it from the
  // outermost given loop down must be loops only, each the single child of the previous.
  // The deepest is found by counting ancestors; only its path is built.
  auto depth = [&](const StmtNode* node) {
    size_t d = 0;
    for (; node != nullptr; node = tree_->parent(node)) ++d;
    return d;
  };
  size_t deepest = 0, deepest_depth = depth(loops[0]);
  for (size_t i = 1; i < loops.size(); ++i) {
    const size_t d = depth(loops[i]);
    if (d > deepest_depth) {
      deepest = i;
      deepest_depth = d;
    }
  }
  const std::vector<const StmtNode*> path = tree_->path_to(loops[deepest]);
  size_t top = path.size();
  for (size_t i = 0; i < loops.size(); ++i) {
    auto it = std::find(path.begin(), path.end(), loops[i]);
    if (it == path.end()) {
      return error(
          kKind, 2, "NotSingleBranchChain", [&] { return fmt::format("loop {}", rv_name(loop_rvs[i])); },
          [&] { return fmt::format("the loop is not an ancestor of loop {}", rv_name(loop_rvs[deepest])); },
          ErrorLocus{loops[i]->loop_var.get(), {}});
    }
    top = std::min(top, static_cast<size_t>(it - path.begin()));
  }
  std::vector<const ForNode*>& chain = plan.chain;
  for (size_t p = top; p < path.size(); ++p) {
    const StmtNode* node = path[p];
    bool single = node->kind == NodeKind::For &&
                  (p + 1 == path.size() || static_cast<const ForNode*>(node)->body.get() == path[p + 1]);
    if (!single) {
      return error(
          kKind, 2, "NotSingleBranchChain", [&] { return fmt::format("loop {}", rv_name(loop_rvs[deepest])); },
          "the loops are not a single-branch chain (a statement or block lies between them)",
          ErrorLocus{chain.empty() ? nullptr : chain.back()->loop_var.get(), {}});
    }
    chain.push_back(static_cast<const ForNode*>(node));
  }
  // Positions of the given loops in the chain, filled in the requested order.
  std::vector<size_t> positions;
  for (const ForNode* l : loops) positions.push_back(std::find(chain.begin(), chain.end(), l) - chain.begin());
  std::sort(positions.begin(), positions.end());
  std::vector<const ForNode*>& order = plan.order;
  order = chain;
  for (size_t i = 0; i < loops.size(); ++i) order[positions[i]] = loops[i];
  std::vector<const VarNode*> inner;
  for (size_t p = 0; p < order.size(); ++p) {
    if (as_const_int(order[p]->min) && as_const_int(order[p]->extent)) continue;  // constant bounds use no loop
    inner.clear();
    for (size_t q = p + 1; q < order.size(); ++q) inner.push_back(order[q]->loop_var.get());
    if (detail::uses_any_var(order[p]->min, inner) || detail::uses_any_var(order[p]->extent, inner)) {
      return error(
          kKind, 3, "DependentLoopDomain", [&] { return fmt::format("loop {}", order[p]->loop_var.name()); },
          "its bounds would use a loop nested inside it", ErrorLocus{order[p]->loop_var.get(), {}});
    }
  }
  // Reordering loops changes the order in which a block's instances run. That is free
  // for spatial variables, and for reduce ones up to reassociation, except where the
  // order carries meaning: ordered (scan) and opaque variables, and reduce variables fed
  // by a loop that also feeds a spatial one (after fusing them), where a reorder can run
  // part of an element's reduction before its init. Such loops keep their relative order.
  auto rank_in = [](const std::vector<const ForNode*>& seq, const ForNode* l) {
    return std::find(seq.begin(), seq.end(), l) - seq.begin();
  };
  std::vector<std::vector<const VarNode*>> used;  // per binding, the variables it mentions
  for (const BlockRealizeNode* r : detail::child_block_realizes(Stmt(chain.back()))) {
    used.resize(r->iter_values.size());
    for (size_t k = 0; k < r->iter_values.size(); ++k) {
      used[k].clear();
      if (r->iter_values[k].defined()) VarCollector(used[k]).visit(r->iter_values[k]);
    }
    std::vector<const ForNode*> ordered, reduce, mixed;
    for (const ForNode* l : chain) {
      bool feeds[4] = {false, false, false, false};  // by IterKind
      for (size_t k = 0; k < r->iter_values.size(); ++k) {
        if (std::find(used[k].begin(), used[k].end(), l->loop_var.get()) != used[k].end()) {
          feeds[static_cast<int>(r->block->iter_vars[k].kind)] = true;
        }
      }
      if (feeds[static_cast<int>(IterKind::kOrdered)] || feeds[static_cast<int>(IterKind::kOpaque)]) ordered.push_back(l);
      if (feeds[static_cast<int>(IterKind::kReduce)]) {
        reduce.push_back(l);
        if (feeds[static_cast<int>(IterKind::kSpatial)]) mixed.push_back(l);
      }
    }
    auto constrained = [&](const ForNode* a, const ForNode* b) {
      auto in = [](const std::vector<const ForNode*>& v, const ForNode* l) {
        return std::find(v.begin(), v.end(), l) != v.end();
      };
      if (in(ordered, a) && in(ordered, b)) return true;
      return in(reduce, a) && in(reduce, b) && (in(mixed, a) || in(mixed, b));
    };
    for (size_t a = 0; a < chain.size(); ++a) {
      for (size_t b = a + 1; b < chain.size(); ++b) {
        if (constrained(chain[a], chain[b]) && rank_in(order, chain[a]) > rank_in(order, chain[b])) {
          return error(
              kKind, 4, "IterationOrderChanged", [&] { return fmt::format("loop {}", chain[b]->loop_var.name()); },
              [&] {
                return fmt::format(
                    "block '{}' depends on the order of loops {} and {} (they feed an ordered, "
                    "opaque or fused spatial-and-reduce iteration variable)",
                    r->block->name, chain[a]->loop_var.name(), chain[b]->loop_var.name());
              },
              ErrorLocus{{}, r->block->name});
        }
      }
    }
  }
  return plan;
}

void Schedule::reorder(const std::vector<LoopRV>& loop_rvs) {
  constexpr InstructionKind kKind = InstructionKind::Reorder;
  const detail::ReorderPlan plan = plan_reorder(loop_rvs).take();
  if (plan.chain.empty()) {
    record(detail::make_instruction(kKind, {}, loop_rvs));
    return;
  }
  commit(detail::replace_in_func(func_, plan.chain.front(), nest_in_order(plan.order, plan.chain.back()->body)),
         detail::make_instruction(kKind, {}, loop_rvs));
}

CheckResult Schedule::check_reorder(const detail::CheckedOperands& ops) const {
  constexpr InstructionKind kKind = InstructionKind::Reorder;
  ops.expect_attrs(0);
  auto args = ops.inputs_from(0);
  if (!args) return detail::unknown();
  std::vector<LoopRV> loops;
  for (const Arg& a : *args) loops.push_back(detail::arg_as<LoopRV>(kKind, a));
  return detail::verdict(plan_reorder(loops), true, 0);
}

namespace detail {

constexpr auto kReorderSlots = numbered_slots({slot::rest_of_inputs("ordered_loops", ValueType::kLoop)});

constinit const InstructionSignature kReorderSignature{
    .python_name = "reorder",
    .slots = kReorderSlots,
    .replay = replay_method<&Schedule::reorder>,
    .check = check_method<&Schedule::check_reorder>,
};

}  // namespace detail
}  // namespace dragon::schedule
