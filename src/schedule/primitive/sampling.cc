// Sampling instructions: sample_perfect_tile, sample_categorical and
// sample_compute_location. Their decisions are recorded in the trace, so replay reproduces
// them and search can change them. What compute_at does with a sampled location is in
// compute_at.cc.
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct SamplePerfectTilePlan;
struct LocationCandidates;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // n factors whose product is the loop's extent, the innermost at most
  // max_innermost_factor (-1: unbounded). A given decision is repaired to a perfect
  // tiling of the current extent (repair_perfect_tile).
  // Requires:
  //   1) n >= 1 (InvalidTileCount)
  //   2) the loop has a constant extent >= 1 (NonConstantExtent)
  //   3) max_innermost_factor is -1 or >= 1 (InvalidMaxInnermost)
  //   4) a decision, if given, has n entries (WrongDecisionLength).
  std::vector<ExprRV> sample_perfect_tile(LoopRV loop, int n, int max_innermost_factor,
                                          std::optional<std::vector<int64_t>> decision = std::nullopt);
  // One of `candidates`, drawn with probabilities `probs`.
  // Requires:
  //   1) candidates are not empty and have as many probs, each >= 0, summing to > 0
  //      (InvalidDistribution)
  //   2) a decision, if given, is an index into candidates (InvalidDecision).
  ExprRV sample_categorical(std::vector<int64_t> candidates, std::vector<double> probs,
                            std::optional<int64_t> decision = std::nullopt);
  // Where to compute `block`, drawn uniformly (TVM's SampleComputeLocation) among: the
  // inline mark (-2, when compute_inline would succeed), the root mark (-1: stay where it
  // is), and the loops of its first consumer (at their position i in get_loops of that
  // consumer) down to the innermost loop holding every consumer, where compute_at would
  // succeed, skipping unit loops and stopping at a data-parallel loop below a reduce one
  // or at a reduce loop below the last data-parallel one. The decision is that index; a
  // given one that is no longer a candidate becomes the nearest candidate below it (root
  // when none). compute_at and reverse_compute_at take the marks (root: no change,
  // inline: compute_inline / reverse_compute_inline); other primitives refuse them
  // (precondition 0). No precondition beyond the block resolving.
  LoopRV sample_compute_location(BlockRV block, std::optional<int64_t> decision = std::nullopt);
  CheckResult check_sample_perfect_tile(const detail::CheckedOperands& ops, const std::optional<Arg>& decision) const;
  CheckResult check_sample_categorical(const detail::CheckedOperands& ops, const std::optional<Arg>& decision) const;
  CheckResult check_sample_compute_location(const detail::CheckedOperands& ops,
                                            const std::optional<Arg>& decision) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::SamplePerfectTilePlan> plan_sample_perfect_tile(LoopRV loop, std::optional<int64_t> n,
                                                                          std::optional<int64_t> max_innermost_factor,
                                                                          const std::vector<int64_t>* decision) const;
  detail::Planned<int64_t> plan_sample_categorical(std::span<const int64_t> candidates, std::span<const double> probs,
                                                   std::optional<int64_t> decision) const;
  detail::Planned<detail::LocationCandidates> plan_sample_compute_location(BlockRV block) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// How the blocks directly under a loop use its variable (TVM's GetLoopIterType): in
// spatial bindings only, in reduce ones only, or otherwise (both, ordered or opaque).
enum class LoopUse { kDataParallel, kReduce, kOther };

LoopUse loop_use(const ForNode* loop) {
  int spatial = 0, reduce = 0, other = 0;
  const std::vector<const VarNode*> var{loop->loop_var.get()};
  for (const BlockRealizeNode* r : detail::child_block_realizes(loop->body)) {
    const BlockNode* b = r->block.get();
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (!detail::uses_any_var(r->iter_values[i], var)) continue;
      switch (b->iter_vars[i].kind) {
        case IterKind::kSpatial: ++spatial; break;
        case IterKind::kReduce: ++reduce; break;
        default: ++other; break;
      }
    }
  }
  if (other > 0 || (spatial > 0 && reduce > 0)) return LoopUse::kOther;
  return reduce > 0 ? LoopUse::kReduce : LoopUse::kDataParallel;
}

// The blocks of `block`'s scope that run after it and read or write a buffer it writes
// (TVM's consumers: read-after-write and write-after-write), in program order.
std::vector<const BlockNode*> later_dependents(const BlockNode* block, const BlockNode* scope) {
  std::vector<const BlockNode*> result;
  bool after = false;
  for (const BlockRealizeNode* r : detail::child_block_realizes(Stmt(scope))) {
    const BlockNode* other = r->block.get();
    if (other == block) {
      after = true;
      continue;
    }
    if (!after) continue;
    bool depends = false;
    for (const BufferRegion& w : block->writes) {
      for (const auto* list : {&other->reads, &other->writes}) {
        for (const BufferRegion& a : *list) depends |= a.buffer.get() == w.buffer.get();
      }
    }
    if (depends) result.push_back(other);
  }
  return result;
}

// The deepest loop enclosing every block of `blocks` with no block between it and them
// (TVM's lowest common ancestor of the consumers, when it is a loop), or nullptr.
const ForNode* innermost_common_loop(const PrimFunc& func, const std::vector<const BlockNode*>& blocks) {
  std::vector<std::vector<const StmtNode*>> paths;
  for (const BlockNode* b : blocks) {
    std::vector<const StmtNode*> path = detail::path_to(func, b);
    path.resize(path.size() - 2);  // above the realization
    paths.push_back(std::move(path));
  }
  size_t common = paths[0].size();
  for (const auto& path : paths) {
    size_t i = 0;
    while (i < common && i < path.size() && path[i] == paths[0][i]) ++i;
    common = i;
  }
  for (size_t i = common; i-- > 0;) {
    const StmtNode* n = paths[0][i];
    if (n->kind == NodeKind::For) return static_cast<const ForNode*>(n);
    if (n->kind == NodeKind::Block || n->kind == NodeKind::BlockRealize) return nullptr;
  }
  return nullptr;
}

// The messages an attempt to use a location mark as a loop gives ("loop l5 was replaced
// by ..."): the marks stand for no loop.
constexpr const char* kRootMark = "SampleComputeLocation's root mark (only compute_at and reverse_compute_at take it)";
constexpr const char* kInlineMark =
    "SampleComputeLocation's inline mark (only compute_at and reverse_compute_at take it)";

}  // namespace

std::vector<int64_t> repair_perfect_tile(std::vector<int64_t> factors, int64_t extent) {
  // Innermost first: keep each factor that still divides what is left, else give that
  // slot everything left; the outermost takes the rest.
  int64_t left = extent;
  for (size_t i = factors.size(); i-- > 1;) {
    if (factors[i] <= 0 || left % factors[i] != 0) factors[i] = left;
    left /= factors[i];
  }
  if (!factors.empty()) factors[0] = left;
  return factors;
}

// What sample_perfect_tile's construction needs: the loop's extent, and a given decision
// repaired to a perfect tiling of it.
struct detail::SamplePerfectTilePlan {
  int64_t extent = 0;
  std::optional<std::vector<int64_t>> repaired;
};

detail::Planned<detail::SamplePerfectTilePlan> Schedule::plan_sample_perfect_tile(
    LoopRV loop_rv, std::optional<int64_t> n, std::optional<int64_t> max_innermost_factor,
    const std::vector<int64_t>* decision) const {
  constexpr InstructionKind kKind = InstructionKind::SamplePerfectTile;
  auto found = find(loop_rv, kKind, "loop");
  if (!found.ok()) return std::move(found).take_error();
  const ForNode* loop = *found;
  const ErrorLocus here{loop->loop_var.get(), {}};
  if (n && *n < 1)
    return error(
        kKind, 1, "InvalidTileCount", [&] { return fmt::format("n = {}", *n); }, "n must be at least 1", here);
  auto extent = as_const_int(loop->extent);
  if (!extent || *extent < 1) {
    return error(
        kKind, 2, "NonConstantExtent", [&] { return fmt::format("loop {}", rv_name(loop_rv)); },
        [&] { return fmt::format("the extent {} is not a constant >= 1", print_expr(loop->extent)); }, here);
  }
  if (max_innermost_factor && *max_innermost_factor != -1 && *max_innermost_factor < 1) {
    return error(
        kKind, 3, "InvalidMaxInnermost",
        [&] { return fmt::format("max_innermost_factor = {}", *max_innermost_factor); },
        "must be -1 (unbounded) or at least 1", here);
  }
  detail::SamplePerfectTilePlan plan;
  plan.extent = *extent;
  if (decision && n) {
    if (static_cast<int64_t>(decision->size()) != *n) {
      return error(
          kKind, 4, "WrongDecisionLength", "decision",
          [&] { return fmt::format("the decision has {} factors, n is {}", decision->size(), *n); }, here);
    }
    plan.repaired = repair_perfect_tile(*decision, *extent);
  }
  return plan;
}

std::vector<ExprRV> Schedule::sample_perfect_tile(LoopRV loop_rv, int n, int max_innermost_factor,
                                                  std::optional<std::vector<int64_t>> decision) {
  constexpr InstructionKind kKind = InstructionKind::SamplePerfectTile;
  detail::SamplePerfectTilePlan plan =
      plan_sample_perfect_tile(loop_rv, n, max_innermost_factor, decision ? &*decision : nullptr).take();
  std::vector<int64_t> factors;
  if (plan.repaired) {
    factors = std::move(*plan.repaired);
  } else if (n == 1) {
    factors = {plan.extent};
  } else {
    factors = schedule::sample_perfect_tile(rng_, plan.extent, n, max_innermost_factor);
  }
  std::vector<ExprRV> outputs;
  for (int64_t f : factors) outputs.push_back(new_expr_rv(f));
  record(detail::make_instruction(kKind, detail::as_outputs(outputs), loop_rv, n, max_innermost_factor),
         Arg::int_list(factors));
  return outputs;
}

detail::Planned<int64_t> Schedule::plan_sample_categorical(std::span<const int64_t> candidates,
                                                           std::span<const double> probs,
                                                           std::optional<int64_t> decision) const {
  constexpr InstructionKind kKind = InstructionKind::SampleCategorical;
  double total = 0;
  bool valid = !candidates.empty() && candidates.size() == probs.size();
  for (double p : probs) {
    valid &= std::isfinite(p) && p >= 0;
    total += p;
  }
  if (!valid || !(total > 0)) {
    return error(kKind, 1, "InvalidDistribution", "probs", [&] {
      return fmt::format("{} candidates with {} probabilities summing to {}", candidates.size(), probs.size(), total);
    });
  }
  if (decision && (*decision < 0 || *decision >= static_cast<int64_t>(candidates.size()))) {
    return error(kKind, 2, "InvalidDecision", "decision",
                 [&] { return fmt::format("index {} is not in [0, {})", *decision, candidates.size()); });
  }
  return decision.value_or(-1);
}

ExprRV Schedule::sample_categorical(std::vector<int64_t> candidates, std::vector<double> probs,
                                    std::optional<int64_t> decision) {
  constexpr InstructionKind kKind = InstructionKind::SampleCategorical;
  plan_sample_categorical(candidates, probs, decision).take();
  const int64_t index = decision ? *decision : rng_.categorical(probs);
  ExprRV out = new_expr_rv(candidates[index]);
  record(detail::make_instruction(kKind, {out}, candidates, probs), Arg(index));
  return out;
}

// Where sample_compute_location may put a block: the decision indices in increasing
// order and, for each, the loop's variable (undefined for the marks).
struct detail::LocationCandidates {
  std::vector<int64_t> indices;
  std::vector<Var> loop_vars;
  // The candidate a decision stands for: the nearest one at or below it, the root when
  // there is none (TVM's repair).
  size_t nearest(int64_t decision) const {
    auto it = std::lower_bound(indices.begin(), indices.end(), decision);
    if (it != indices.end() && *it == decision) return it - indices.begin();
    if (it != indices.begin()) return it - indices.begin() - 1;
    return std::find(indices.begin(), indices.end(), int64_t{-1}) - indices.begin();
  }
};

detail::Planned<detail::LocationCandidates> Schedule::plan_sample_compute_location(BlockRV block_rv) const {
  constexpr InstructionKind kKind = InstructionKind::SampleComputeLocation;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  const BlockNode* block = *found;
  // Candidates as TVM collects them, in increasing index order: inline (-2) when
  // compute_inline would succeed, root (-1), then positions i in the first consumer's loops,
  // down to the innermost loop holding every consumer, where compute_at would succeed,
  // skipping unit loops and stopping at a data-parallel loop below a reduce one or at a
  // reduce loop below the last data-parallel one. Whether they would succeed is their
  // plans' verdict: nothing is applied.
  detail::LocationCandidates candidates;
  if (check_inline(InstructionKind::ComputeInline, block_rv).verdict == Verdict::kApplies) {
    candidates.indices.push_back(-2);
    candidates.loop_vars.emplace_back();
  }
  candidates.indices.push_back(-1);
  candidates.loop_vars.emplace_back();
  const BlockNode* scope = tree_->find(block)->scope;
  std::vector<const BlockNode*> consumers =
      scope == nullptr ? std::vector<const BlockNode*>{} : later_dependents(block, scope);
  const ForNode* boundary = consumers.empty() ? nullptr : innermost_common_loop(func_, consumers);
  if (boundary != nullptr) {
    const std::span<const ForNode* const> loops = tree_->find(consumers[0])->scope_loops();
    const size_t count = std::find(loops.begin(), loops.end(), boundary) - loops.begin() + 1;
    DRAGON_CHECK(count <= loops.size());
    std::vector<LoopUse> uses;
    int64_t last_data_parallel = -1;
    for (size_t i = 0; i < count; ++i) {
      uses.push_back(loop_use(loops[i]));
      if (uses[i] == LoopUse::kDataParallel) last_data_parallel = static_cast<int64_t>(i);
    }
    bool seen_reduce = false;
    for (size_t i = 0; i < count; ++i) {
      if (is_const_int(loops[i]->extent, 1)) continue;
      if (uses[i] == LoopUse::kDataParallel) {
        if (seen_reduce) break;
      } else {
        seen_reduce = true;
        if (static_cast<int64_t>(i) > last_data_parallel) break;
      }
      if (compute_at_applies(block, loops[i])) {
        candidates.indices.push_back(static_cast<int64_t>(i));
        candidates.loop_vars.push_back(loops[i]->loop_var);
      }
    }
  }
  return candidates;
}

LoopRV Schedule::sample_compute_location(BlockRV block_rv, std::optional<int64_t> decision) {
  constexpr InstructionKind kKind = InstructionKind::SampleComputeLocation;
  // The root (-1) is always a candidate: a decision for it needs no other.
  detail::LocationCandidates candidates;
  if (decision && *decision == -1) {
    resolve(block_rv, kKind, "block");
    candidates.indices = {-1};
    candidates.loop_vars.emplace_back();
  } else {
    candidates = plan_sample_compute_location(block_rv).take();
  }
  const std::vector<int64_t>& indices = candidates.indices;
  const size_t chosen = decision ? candidates.nearest(*decision)
                                 : static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(indices.size())));
  LoopRV out;
  if (indices[chosen] >= 0) {
    out = new_loop_rv(candidates.loop_vars[chosen]);
  } else {
    // A loop entry without a loop: compute_at recognizes the mark by its value, and
    // every other primitive refuses it as an invalidated loop (precondition 0).
    SymbolEntry mark;
    mark.type = RVType::kLoop;
    mark.value = indices[chosen];
    mark.invalidated_by = indices[chosen] == -1 ? kRootMark : kInlineMark;
    out = LoopRV{new_rv(std::move(mark)).id};
  }
  record(detail::make_instruction(kKind, {out}, block_rv), Arg(indices[chosen]));
  return out;
}

CheckResult Schedule::check_sample_perfect_tile(const detail::CheckedOperands& ops,
                                                const std::optional<Arg>& decision) const {
  constexpr InstructionKind kKind = InstructionKind::SamplePerfectTile;
  ops.expect(1, 2);
  auto loop = ops.loop(0);
  // Replay reads n and max_innermost_factor as int.
  std::optional<int64_t> n, max_inner;
  if (auto v = ops.int_attr(0)) n = static_cast<int>(*v);
  if (auto v = ops.int_attr(1)) max_inner = static_cast<int>(*v);
  std::optional<std::vector<int64_t>> factors;
  if (decision) factors = detail::list_as<int64_t>(kKind, *decision);
  if (!loop) return detail::unknown();
  auto plan = plan_sample_perfect_tile(*loop, n, max_inner, factors ? &*factors : nullptr);
  std::optional<Arg> recorded;
  if (plan.ok() && plan->repaired) recorded = Arg::int_list(*plan->repaired);
  CheckResult result = detail::verdict(std::move(plan), n && max_inner, n ? static_cast<size_t>(*n) : 0);
  if (result.verdict == Verdict::kApplies) result.decision = std::move(recorded);
  return result;
}

CheckResult Schedule::check_sample_categorical(const detail::CheckedOperands& ops,
                                               const std::optional<Arg>& decision) const {
  constexpr InstructionKind kKind = InstructionKind::SampleCategorical;
  ops.expect(0, 2);
  const Arg* candidates = ops.attr(0);
  const Arg* probs = ops.attr(1);
  std::optional<int64_t> index;
  if (decision) index = detail::arg_as<int64_t>(kKind, *decision);
  if (candidates == nullptr || probs == nullptr) return detail::unknown();
  const std::vector<int64_t> c = detail::list_as<int64_t>(kKind, *candidates);
  const std::vector<double> p = detail::list_as<double>(kKind, *probs);
  CheckResult result = detail::verdict(plan_sample_categorical(c, p, index), true, 1);
  if (result.verdict == Verdict::kApplies && index) result.decision = Arg(*index);
  return result;
}

CheckResult Schedule::check_sample_compute_location(const detail::CheckedOperands& ops,
                                                    const std::optional<Arg>& decision) const {
  constexpr InstructionKind kKind = InstructionKind::SampleComputeLocation;
  ops.expect(1, 0);
  auto block = ops.block(0);
  std::optional<int64_t> index;
  if (decision) index = detail::arg_as<int64_t>(kKind, *decision);
  if (!block) return detail::unknown();
  if (!index || *index == -1) {
    // Which location is drawn does not change whether it applies: only the block must
    // resolve. The root (-1) is always a candidate, recorded as given.
    CheckResult result = detail::verdict(find(*block, kKind, "block"), true, 1);
    if (index && result.verdict == Verdict::kApplies) result.decision = Arg(int64_t{-1});
    return result;
  }
  auto candidates = plan_sample_compute_location(*block);
  std::optional<Arg> recorded;
  if (candidates.ok()) recorded = Arg(candidates->indices[candidates->nearest(*index)]);
  CheckResult result = detail::verdict(std::move(candidates), true, 1);
  result.decision = std::move(recorded);
  return result;
}

namespace detail {

constexpr auto kSamplePerfectTileSlots = numbered_slots({
    slot::input("loop", ValueType::kLoop),
    slot::attr("n", ValueType::kInt),
    slot::attr("max_innermost_factor", ValueType::kInt),
});

constinit const InstructionSignature kSamplePerfectTileSignature{
    .python_name = "sample_perfect_tile",
    .is_pure = true,
    .slots = kSamplePerfectTileSlots,
    .outputs = OutputSignature::value_of(1, RVType::kExpr),
    .decision = DecisionShape::kIntList,
    .decision_length_slot = 1,
    .replay = replay_method<&Schedule::sample_perfect_tile>,
    .check = check_method<&Schedule::check_sample_perfect_tile>,
};

constexpr auto kSampleCategoricalSlots = numbered_slots({
    slot::list_attr("candidates", ValueType::kInt),
    slot::list_attr("probs", ValueType::kFloat).defaults_to_uniform_probs(),
});

constinit const InstructionSignature kSampleCategoricalSignature{
    .python_name = "sample_categorical",
    .is_pure = true,
    .slots = kSampleCategoricalSlots,
    .outputs = OutputSignature::one(RVType::kExpr),
    .decision = DecisionShape::kInt,
    .replay = replay_method<&Schedule::sample_categorical>,
    .check = check_method<&Schedule::check_sample_categorical>,
};

constexpr auto kSampleComputeLocationSlots = numbered_slots({slot::input("block", ValueType::kBlock)});

constinit const InstructionSignature kSampleComputeLocationSignature{
    .python_name = "sample_compute_location",
    .is_pure = true,
    .slots = kSampleComputeLocationSlots,
    .outputs = OutputSignature::one(RVType::kLoop),
    .decision = DecisionShape::kInt,
    .replay = replay_method<&Schedule::sample_compute_location>,
    .check = check_method<&Schedule::check_sample_compute_location>,
};

}  // namespace detail
}  // namespace dragon::schedule
