// Schedule: the unscheduled and current PrimFunc, the random variables' symbol table,
// the random engine and the recorded trace; one method per primitive. Not a search
// strategy nor a script codec.
//
// Each primitive's members (its method with its doc comment and "Requires:" list, its
// check_ and plan_ members, its plan struct) are declared in its own source,
// src/schedule/primitive/<name>.cc, in the blocks `#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS`,
// `..._PRIVATE_MEMBERS` and `..._DETAIL_DECLARATIONS` at its top; the build gathers them
// (src/schedule/gather_schedule_members.cc) into <build>/src/schedule/generated/include/
// dragon/schedule/schedule_{public,private,detail}.inc, included below, so that adding a
// primitive touches no header. Read a primitive's declarations in its source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "dragon/ir/block_tree.h"
#include "dragon/ir/function.h"
#include "dragon/schedule/check.h"
#include "dragon/schedule/instruction.h"
#include "dragon/schedule/random_engine.h"
#include "dragon/schedule/random_var.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace.h"

namespace dragon::schedule {

namespace detail {
template <typename T>
class Planned;
class CheckedOperands;
class PlanMemo;
// A string, or the string a function returns (an error's text, built only when wanted).
template <typename T>
std::string text_of(const T& text) {
  if constexpr (std::is_invocable_v<const T&>) {
    return text();
  } else {
    return std::string(text);
  }
}
// What each primitive's construction needs, found by its plan (primitive/<name>.cc).
#include "dragon/schedule/schedule_detail.inc"
}  // namespace detail

using BlockOrLoop = std::variant<BlockRV, LoopRV>;
// A split factor: a constant, a sampled value, or None (inferred; at most one).
using SplitFactor = std::variant<None, int64_t, ExprRV>;
// An annotation value: a constant or a sampled value (stored as its integer).
using AnnotationInput = std::variant<int64_t, double, std::string, ExprRV>;

// Each primitive checks its numbered preconditions ("Requires:"), throws ScheduleError
// (kind, precondition number) on the first that fails and then leaves the schedule
// unchanged: the IR is immutable, so state is committed only at the end.
class Schedule {
 public:
  // A schedule of `func` (which must be well formed), seeded deterministically.
  explicit Schedule(ir::PrimFunc func, int64_t seed = 1);

  // An independent copy: same function, symbol table, trace and random state. Cheap:
  // the IR is shared (immutable). Seed the copy with fork_seed() to make it diverge.
  Schedule copy() const { return *this; }
  int64_t fork_seed() { return rng_.fork_seed(); }
  void seed(int64_t seed) { rng_.seed(seed); }
  RandomEngine& rng() { return rng_; }

  const ir::PrimFunc& func() const { return func_; }
  const ir::PrimFunc& original() const { return original_; }
  const Trace& trace() const { return trace_; }

  // ---- Random variables --------------------------------------------------------------
  // The IR a random variable stands for now; throws ScheduleError (precondition 0) when
  // it was invalidated ("loop l3 was replaced by Split") or is unknown.
  const ir::BlockNode* get(BlockRV rv) const;
  const ir::ForNode* get(LoopRV rv) const;
  int64_t get(ExprRV rv) const;
  // Whether `rv` was made by this schedule and still resolves.
  bool is_valid(RandomVar rv) const;
  // How func()'s blocks and loops nest (built once per function, shared by copies).
  const ir::BlockTree& tree() const { return *tree_; }

  // ---- Checking an instruction ---------------------------------------------------------
  // Whether replaying `inst` (its inputs naming this schedule's random variables) with
  // `decision` would apply, and what it would return, without applying it: the verdict
  // of the primitive's own preconditions, the plan its method runs first (one per
  // primitive in primitive/<name>.cc), so it cannot drift from the primitive. Operands
  // `known` leaves out are unknown: then kFails means every value they could take fails,
  // kApplies that every value applies. Malformed operands fail, as replay rejects them.
  // Cheap enough to ask per token of a generated script (the constrained decoder); the
  // one costly question is SampleComputeLocation with a decision (a check of compute_at
  // per candidate loop).
  // `explain` false leaves CheckResult::error without its text (cheaper: the constrained
  // decoder asks for verdicts only).
  CheckResult check(const Instruction& inst, const std::optional<Arg>& decision = std::nullopt,
                    KnownOperands known = {}, bool explain = true) const;

  // ---- The primitives ----------------------------------------------------------------
  // Per source (lookups, sampling, loops, compute location, inlining and caching,
  // annotations, reductions, layout, blocks): each method with its numbered
  // preconditions, then its check_<name>, the verdict check() reaches through the kind's
  // declaration (InstructionSignature::check): the operands read as replay reads them,
  // then the plan. CheckedOperands is internal, so only check() can call those.
#include "dragon/schedule/schedule_public.inc"

 private:
  struct SymbolEntry {
    RVType type = RVType::kBlock;
    std::string block_name;  // kBlock
    ir::Var loop_var;        // kLoop
    int64_t value = 0;       // kExpr
    // Set when the IR it named disappeared: "Split", "ComputeInline", ...
    std::string invalidated_by;
  };

  RandomVar new_rv(SymbolEntry entry);
  BlockRV new_block_rv(std::string name);
  LoopRV new_loop_rv(ir::Var var);
  ExprRV new_expr_rv(int64_t value);
  // What a random variable stands for, or the ScheduleError of precondition 0 (unknown,
  // invalidated, or its block or loop gone); resolve() throws that error.
  detail::Planned<const SymbolEntry*> entry(RandomVar rv, InstructionKind kind, std::string_view role) const;
  detail::Planned<const ir::BlockNode*> find(BlockRV rv, InstructionKind kind, std::string_view role) const;
  detail::Planned<const ir::ForNode*> find(LoopRV rv, InstructionKind kind, std::string_view role) const;
  detail::Planned<int64_t> find(ExprRV rv, InstructionKind kind, std::string_view role) const;
  const ir::BlockNode* resolve(BlockRV rv, InstructionKind kind, std::string_view role) const;
  const ir::ForNode* resolve(LoopRV rv, InstructionKind kind, std::string_view role) const;
  int64_t resolve(ExprRV rv, InstructionKind kind, std::string_view role) const;
  // SampleComputeLocation's root (-1) or inline (-2) mark when `loop` is one, else nullopt.
  std::optional<int64_t> location_mark(LoopRV loop) const;
  // Whether some loop variable of this schedule is one of those marks.
  bool has_location_marks() const;
  // Records an instruction that changes no IR.
  void record(Instruction inst, std::optional<Arg> decision = std::nullopt);

  // ---- Plans: each primitive's preconditions (primitive/<name>.cc) -----------------------
  // A plan checks the primitive's numbered preconditions in order, building no new IR,
  // and returns what the construction needs or the error of the first that fails. The
  // primitive runs it first; check() runs it alone. An operand passed as nullopt is
  // unknown: the preconditions that read it are skipped (what is returned then is only
  // good for its verdict). Declared in the primitives' sources, as their methods are.
#include "dragon/schedule/schedule_private.inc"

  // Verifies `func` (when IR checks are on), makes it current, invalidates random
  // variables whose loops or blocks disappeared, and records `inst`.
  void commit(ir::PrimFunc func, Instruction inst);
  // The ScheduleError of precondition `k` of `kind` on the current function. `operand`
  // and `reason` are strings or functions returning one, called only when the error's
  // text is wanted: a check asked for no explanation builds none (plans fail often).
  template <typename Operand, typename Reason>
  ScheduleError error(InstructionKind kind, int k, std::string error_name, const Operand& operand, const Reason& reason,
                      ErrorLocus locus = {}) const {
    if (!explain_) return ScheduleError(kind, k, std::move(error_name));
    return ScheduleError(kind, k, std::move(error_name), detail::text_of(operand), detail::text_of(reason), func_,
                         std::move(locus));
  }

  ir::PrimFunc original_;
  ir::PrimFunc func_;
  std::shared_ptr<const ir::BlockTree> tree_;  // of func_
  // Results of plan analyses by the IR nodes they read, shared with copies (plan_memo.h).
  std::shared_ptr<detail::PlanMemo> memo_;
  std::vector<SymbolEntry> symbols_;  // indexed by RV id
  RandomEngine rng_;
  Trace trace_;
  // Whether plans build their errors' text (off while check() runs without explanation).
  mutable bool explain_ = true;
};

// The repair rule for perfect-tile decisions replayed on another extent: from the
// innermost factor out, a factor that does not divide what is left becomes what is left;
// the outermost takes the rest. Any list of n >= 1 integers becomes a perfect tiling.
std::vector<int64_t> repair_perfect_tile(std::vector<int64_t> factors, int64_t extent);

// Whether a primitive reads a block's annotation `key` (storage_align its alignments,
// tensorize its mark; unannotate reads whichever key it is given): annotating a block
// under any other key changes no other primitive's outcome.
bool block_annotation_is_read(std::string_view key);

// Replays `trace` on a fresh schedule of `func` and returns it.
Schedule replay(const Trace& trace, const ir::PrimFunc& func, int64_t seed = 1);

}  // namespace dragon::schedule
