// Internal: the semantic half of constrained decoding. A LineOracle holds the schedule
// replayed up to the last complete line and answers, for a partial line (its committed
// words), which next words can still lead to a valid line, by trying completions on the
// schedule (or deciding a trial by an exact rule, line_oracle_rules.cc). The
// character-level walk and the caches per prefix are in constrained.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/script/script_schema.h"

namespace dragon::script::decoding {

// A partial line after its committed words. (copy_for_extension in line_oracle.cc copies
// every field: a new field must be added there too.)
struct Position {
  const KindSchema* kind = nullptr;     // null: the mnemonic comes next
  size_t slot = 0;                      // the slot being filled, or the next one
  std::vector<schedule::Arg> values;    // the values of slots < slot (lists as Arg::List)
  std::vector<schedule::Arg> elems;     // elements of slot `slot` (a list or rest) so far
  bool list_open = false;               // inside '[' of slot `slot`
  bool decision = false;                // after " ="
  std::vector<int64_t> decision_values;
  std::string text;                     // the committed text: the cache key
};

// What may come next at a Position. Words in `words` are checked one by one; the
// unbounded classes (integers in a range, floats, strings) are checked with one
// representative each (the slots that use them accept every value of the class alike).
struct Options {
  std::vector<std::string> words;  // sorted; includes "[", "]" and "=" when they may come
  bool any_int = false;
  int64_t int_lo = 0, int_hi = 0;
  bool any_float = false;
  bool float_nonnegative = false;  // probabilities
  bool any_string = false;
  bool string_enum = false;
  std::span<const ShortName> string_names;
  bool end_line = false;  // the line is valid as it stands
  bool empty() const { return words.empty() && !any_int && !any_float && !any_string; }
  // Whether another item may follow a space (a word other than "]").
  bool continuable() const {
    if (any_int || any_float || any_string) return true;
    for (const std::string& w : words) {
      if (w != "]") return true;
    }
    return false;
  }
};

// The state after complete lines: the schedule, the script's random variables and the
// codec's line decoder (the final judge of a line's spelling).
struct ReplayState {
  schedule::Schedule sch;
  std::vector<schedule::RandomVar> vars[3];  // per-type index -> the schedule's variable
  // Per loop index: made by SampleComputeLocation (a location mark compute_at accepts
  // even when it names no loop).
  std::vector<bool> loop_is_location;
  LineDecoder decoder;
  explicit ReplayState(schedule::Schedule s) : sch(std::move(s)) {}
};

// Stands for "whatever the lookup returns" in a completion's count slot; never written.
inline constexpr int64_t kAnyCount = -1;

struct OracleCounters {
  int64_t positions = 0;
  int64_t trials = 0;
};

// A completion that applied: every slot written so far (the rest at their defaults) and
// the decision. Kept per kind across lines: the completion that let a mnemonic apply
// before the last line usually still applies after it, so it is tried first.
struct Witness {
  std::vector<schedule::Arg> values;
  std::optional<std::vector<int64_t>> decision;
};
using WitnessMemo = std::unordered_map<int, Witness>;  // by InstructionKind

// Outcomes of the Blockize rule, shared by the oracles of one decoder, keyed by the IR
// nodes the rule reads (the bounds of the scope's loops, which of them is the target,
// the block's bindings, predicate and iteration domains). Most lines rebuild the nodes
// above what they change but keep those: the next line start asks the same question.
// `alive` holds every node a key names, so no key can match a later node at a reused
// address.
struct BlockizeMemo {
  std::map<std::vector<const void*>, bool> outcomes;
  std::vector<ir::Expr> alive;
};

class LineOracle {
 public:
  // `witnesses` (optional, shared by the oracles of one decoder) remembers per kind the
  // last completion that applied.
  // `blockize_memo` (optional, shared the same way) keeps the Blockize rule's outcomes.
  LineOracle(std::shared_ptr<const ReplayState> state, OracleCounters* counters, WitnessMemo* witnesses = nullptr,
             BlockizeMemo* blockize_memo = nullptr);

  // The position after `word` is committed at `pos` ("[", "]", "=" included); nullopt
  // when the word cannot be read there (a lexical or type mismatch). Says nothing about
  // feasibility.
  std::optional<Position> advance(const Position& pos, std::string_view word) const;
  // Whether some completion of `pos` is a valid line (memoized by pos.text).
  bool feasible(const Position& pos);
  // The options at `pos` (memoized by pos.text).
  const Options& options(const Position& pos);
  // Records `options` as the options at `pos` (for a line start reused from the previous
  // one, README.md); returns the stored copy.
  const Options& seed_options(const Position& pos, Options options);
  // Whether options(pos).continuable(), stopping at the first next word found (memoized).
  bool has_continuation(const Position& pos);
  // Whether the line `pos` is valid as it stands; on success `next` (when given) receives
  // the state after it.
  bool line_valid(const Position& pos, std::shared_ptr<ReplayState>* next = nullptr);

  const ReplayState& state() const { return *state_; }

  // The exact shortcuts that replace trials (mnemonics known to apply, operands ruled
  // out, outcomes decided from the operands: README.md) are on by default; tests turn
  // them off to check that every answer is the same without them. Set before any query.
  void set_shortcuts(bool on) { shortcuts_ = on; }
  // For tests: the outcome a shortcut decides for `inst` on this state without applying
  // it (nullopt: no shortcut covers it), and the outcome of applying it.
  std::optional<bool> rule_outcome(const schedule::Instruction& inst, const std::optional<schedule::Arg>& decision = {},
                                   std::optional<int64_t> count = {}) const {
    return outcome_by_rule(inst.kind, inst.inputs, inst.attrs, decision, count);
  }
  // For tests: whether the operand rules claim that `value` in slot `slot` of `kind` fails
  // whatever the other slots hold.
  bool operand_ruled_out(schedule::InstructionKind kind, size_t slot, const schedule::Arg& value,
                         const std::vector<schedule::Arg>& before) const {
    return operand_rules_out(kind, slot, value, before);
  }
  bool trial_outcome(const schedule::Instruction& inst, const std::optional<schedule::Arg>& decision = {},
                     std::optional<int64_t> count = {}) const;

 private:
  struct Completion;
  bool try_line(const Position& pos, const std::optional<std::vector<int64_t>>& decision,
                std::shared_ptr<ReplayState>* next);
  // The state after the line `pos` whose instruction applied on scratch_ with `outputs`.
  bool commit_line(const Position& pos, const KindSchema& kind, std::vector<schedule::RandomVar> outputs,
                   std::shared_ptr<ReplayState>* next);
  bool search(const Position& pos);
  // Whether a required slot after `pos.slot` has no completion to try whatever the values
  // before it (TransformLayout's index_map: no map is ever offered), so that the search
  // from `pos` would try every value of the slots before it only to fail there.
  bool required_slot_without_completion(const Position& pos) const;
  std::unique_ptr<Options> compute_options(const Position& pos, bool first_only);
  // The memo key of a position: its text, except where the text's difference cannot
  // matter (an Annotate key).
  std::string memo_key(const Position& pos) const;
  bool is_location_mark(const schedule::Arg& loop) const;
  // The index of a script variable among those of its type (memoized map by id).
  std::optional<size_t> script_index(const schedule::RandomVar& rv) const;
  // Whether the script's variable `index` of `type` still resolves (memoized: the state
  // is fixed, and Schedule::is_valid throws internally for dead ones).
  bool is_valid(schedule::RVType type, size_t index) const;
  // The block or loop a variable names in the state, memoized (resolving walks the IR);
  // throws when it does not resolve.
  const ir::BlockNode* block_at(int64_t id) const;
  const ir::ForNode* loop_at(int64_t id) const;
  // Whether `loop` resolves to a loop above the block `block` resolves to.
  bool loop_above_block(const schedule::Arg& block, const schedule::Arg& loop) const;
  // Whether some other block below `loop` writes a buffer `block` reads (true when
  // either does not resolve: the trial decides).
  bool loop_holds_producer(const schedule::Arg& block, const schedule::Arg& loop) const;
  // Fuse's first preconditions (the loops resolve, are distinct and form a chain of only
  // children); false means the trial would fail.
  bool fuse_chain_possible(const std::vector<schedule::Arg>& loops) const;
  // Whether some completion of the mnemonic `kind` alone is known to apply without a
  // trial: kinds whose only precondition is that an operand resolves (README.md).
  bool mnemonic_applies_by_rule(schedule::InstructionKind kind) const;
  // Whether trying `value` in slot `slot` of `kind` certainly fails, by a precondition the
  // primitive checks on that operand alone (README.md); false when unsure.
  // `before`: the values of the earlier slots.
  bool operand_rules_out(schedule::InstructionKind kind, size_t slot, const schedule::Arg& value,
                         const std::vector<schedule::Arg>& before) const;
  // Whether an operand written at `pos` fails a check the search applies to the operands
  // it picks (operand_rules_out, and ComputeAt/ReverseComputeAt's placement checks).
  bool typed_operand_fails(const Position& pos) const;
  // Whether ReverseComputeAt of `block` at the non-mark `loop` fails precondition 7 (a
  // producer under the loop reduces over it or a loop above it).
  bool loop_feeds_producer_reduction(const schedule::Arg& block, const schedule::Arg& loop) const;
  // Whether ComputeAt of `block` at the non-mark `loop` fails precondition 5 (another
  // block writes its output, or reads it outside the loop).
  bool consumer_outside_loop(const schedule::Arg& block, const schedule::Arg& loop) const;
  // Whether ReverseComputeInline of `block` can pass precondition 4 (one produced input
  // whose producer could be inlined into it); false means it fails.
  bool single_complete_producer(const ir::BlockNode* block) const;
  // Whether the witness `values` of `kind` would fail a check the search makes before
  // trying a completion (then the search runs instead: a cost decision only).
  bool witness_ruled_out(schedule::InstructionKind kind, const std::vector<schedule::Arg>& values) const;
  // The outcome of a trial (with the decoder's own checks: a decision kept as written, a
  // count equal to the outputs) for kinds whose preconditions are all cheap checks of the
  // operands (Split, Fuse, Reorder, Annotate, Unannotate, GetLoops, SamplePerfectTile,
  // SampleCategorical, Parallel, Vectorize, Bind, EnterPostproc), decided without
  // applying it; nullopt for other kinds and operands of unexpected shape (the trial
  // decides).
  std::optional<bool> outcome_by_rule(schedule::InstructionKind kind, const std::vector<schedule::Arg>& inputs,
                                      const std::vector<schedule::Arg>& attrs, const std::optional<schedule::Arg>& decision,
                                      std::optional<int64_t> count) const;
  // Cache rules (cache_read_write.cc in full): CacheRead, CacheWrite and SetScope decided
  // from the IR as it is; nullopt for operands of unexpected shape or an IR the rules do
  // not cover (a block in an init, blocks sharing a name).
  std::optional<bool> cache_read_outcome(const std::vector<schedule::Arg>& inputs,
                                         const std::vector<schedule::Arg>& attrs) const;
  std::optional<bool> cache_write_outcome(const std::vector<schedule::Arg>& inputs,
                                          const std::vector<schedule::Arg>& attrs) const;
  // DecomposeReduction (decompose_reduction.cc in full, but for predicates that guard a
  // dropped loop: the trial decides those).
  std::optional<bool> decompose_reduction_outcome(const std::vector<schedule::Arg>& inputs,
                                                  const std::vector<schedule::Arg>& attrs) const;
  // Blockize (blockize.cc in full, its analysis of the bindings repeated).
  std::optional<bool> blockize_outcome(const std::vector<schedule::Arg>& inputs,
                                       const std::vector<schedule::Arg>& attrs) const;
  // blockize_outcome's analysis of the bindings and the predicate (its preconditions 3
  // and 4), for a chain `inner` from the target down to the block and the scope's loops
  // above it, `outer`.
  bool blockize_analysis_passes(const ir::BlockRealizeNode* realize, const ir::BlockNode* block,
                                const std::vector<const ir::ForNode*>& outer,
                                const std::vector<const ir::ForNode*>& inner,
                                const std::vector<const ir::ForNode*>& scope_loops) const;
  // RFactor (rfactor.cc in full, but for predicates that guard another reduce loop).
  std::optional<bool> rfactor_outcome(const std::vector<schedule::Arg>& inputs,
                                      const std::vector<schedule::Arg>& attrs) const;
  // StorageAlign (storage_align.cc in full, for a block not yet aligned).
  std::optional<bool> storage_align_outcome(const std::vector<schedule::Arg>& inputs,
                                            const std::vector<schedule::Arg>& attrs) const;
  std::optional<bool> set_scope_outcome(const std::vector<schedule::Arg>& inputs,
                                        const std::vector<schedule::Arg>& attrs) const;
  // The value of the expression variable `id` (nullopt: it does not resolve), memoized.
  std::optional<int64_t> expr_value(int64_t id) const;
  mutable std::unordered_map<int64_t, std::optional<int64_t>> expr_values_;
  // Whether the block writes one buffer, a parameter of the function.
  bool writes_parameter(const ir::BlockNode* block) const;
  // Whether `scope` encloses `block` (at any depth).
  bool encloses(const ir::BlockNode* scope, const ir::BlockNode* block) const;
  // The top-level statement of `scope`'s body that holds `block` (which it encloses).
  size_t top_index_in(const ir::BlockNode* scope, const ir::BlockNode* block) const;
  // ComputeAt's (ReverseComputeAt's) trial outcome by schedule::Schedule::check_compute_at
  // (check_reverse_compute_at), building no new IR, with the failure's name and reason as
  // a trial would leave them; nullopt for operands of a shape the check does not take
  // (the trial decides).
  std::optional<bool> check_compute_at(schedule::InstructionKind kind, const std::vector<schedule::Arg>& inputs,
                                       const std::vector<schedule::Arg>& attrs);
  // Whether the last failed trial broke a precondition of ComputeAt/ReverseComputeAt's
  // block alone (one every other non-mark loop would break too).
  bool last_failure_block_only(schedule::InstructionKind kind) const;
  // The values a slot may be typed with, each with its word.
  using TypedPool = std::vector<std::pair<schedule::Arg, std::string>>;
  // The memoized pool of a random-variable slot, else the pool built into `built`.
  const TypedPool& typing_pool(const Position& pos, const SlotSchema& slot, TypedPool& built) const;
  TypedPool build_typing_pool(const Position& pos, const SlotSchema& slot) const;
  // typing_pool of the random-variable slots, by 2 * ValueType + (loop slot admitting marks).
  mutable std::unordered_map<size_t, TypedPool> rv_pools_;
  std::vector<schedule::Arg> completion_pool(const Position& pos, const SlotSchema& slot) const;
  std::vector<std::vector<schedule::Arg>> rest_extensions(const Position& pos, const SlotSchema& slot) const;

  bool shortcuts_ = true;
  std::shared_ptr<const ReplayState> state_;
  OracleCounters* counters_;
  WitnessMemo* witnesses_;
  BlockizeMemo* blockize_memo_;
  std::optional<Witness> last_success_;  // the last trial that applied
  std::string last_error_name_, last_error_reason_;  // the last trial that failed (ScheduleError)
  // Failed trials leave it unchanged; after a success it is dropped and copied again from
  // the state only when the next trial needs it (many oracles never try again).
  std::optional<schedule::Schedule> scratch_;
  // The last trial that applied (by its exact instruction), with the schedule after it.
  struct AppliedTrial {
    std::string key;
    schedule::Schedule sch;
    std::vector<schedule::RandomVar> outputs;
  };
  std::optional<AppliedTrial> last_applied_;
  std::vector<std::string> block_names_;
  std::unordered_map<const ir::BlockNode*, std::vector<const ir::ForNode*>> loops_above_;
  std::unordered_map<const ir::BlockNode*, size_t> loops_in_scope_;
  std::unordered_set<const ir::BlockNode*> top_level_blocks_;
  std::unordered_set<const ir::BlockNode*> non_leaf_blocks_;
  std::unordered_map<const ir::BlockNode*, const ir::BlockRealizeNode*> realize_of_;
  std::unordered_map<const ir::BlockNode*, const ir::BlockNode*> parent_block_;  // the scope block
  std::unordered_map<const ir::BlockNode*, size_t> top_index_;  // its statement in the scope's body
  bool block_in_init_ = false;      // some block lies in an init (the cache rules then defer)
  bool unique_block_names_ = true;  // primitives find blocks by name
  bool has_location_marks_ = false;  // some loop variable is a SampleComputeLocation mark
  std::unordered_map<std::string, bool> feasible_memo_;
  std::unordered_map<std::string, std::unique_ptr<Options>> options_memo_;
  std::unordered_map<std::string, bool> continuation_memo_;
  struct TrialOutcome {
    bool ok = false;
    std::string error_name, error_reason;
  };
  std::unordered_map<std::string, TrialOutcome> trial_memo_;  // by the instruction tried
  // By 2 * id + (1 for a block); null: does not resolve.
  mutable std::unordered_map<int64_t, const ir::StmtNode*> resolved_;
  mutable std::vector<int8_t> valid_cache_[3];  // per type and index: -1 unknown, 0, 1
  // Per variable id, its index among the variables of its type (-1: none); built on
  // first use.
  mutable std::vector<int64_t> index_of_;
  mutable bool index_built_ = false;
};

}  // namespace dragon::script::decoding
