// Internal: the semantic half of constrained decoding. A LineOracle holds the schedule
// replayed up to the last complete line and answers, for a partial line (its committed
// words), which next words can still lead to a valid line, by trying completions on the
// schedule. The character-level walk and the caches per prefix are in constrained.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/script/script_schema.h"

namespace dragon::script::decoding {

// A partial line after its committed words.
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

class LineOracle {
 public:
  // `witnesses` (optional, shared by the oracles of one decoder) remembers per kind the
  // last completion that applied.
  LineOracle(std::shared_ptr<const ReplayState> state, OracleCounters* counters, WitnessMemo* witnesses = nullptr);

  // The position after `word` is committed at `pos` ("[", "]", "=" included); nullopt
  // when the word cannot be read there (a lexical or type mismatch). Says nothing about
  // feasibility.
  std::optional<Position> advance(const Position& pos, std::string_view word) const;
  // Whether some completion of `pos` is a valid line (memoized by pos.text).
  bool feasible(const Position& pos);
  // The options at `pos` (memoized by pos.text).
  const Options& options(const Position& pos);
  // Whether options(pos).continuable(), stopping at the first next word found (memoized).
  bool has_continuation(const Position& pos);
  // Whether the line `pos` is valid as it stands; on success `next` (when given) receives
  // the state after it.
  bool line_valid(const Position& pos, std::shared_ptr<ReplayState>* next = nullptr);

  const ReplayState& state() const { return *state_; }

 private:
  struct Completion;
  bool try_line(const Position& pos, const std::optional<std::vector<int64_t>>& decision,
                std::shared_ptr<ReplayState>* next);
  bool search(const Position& pos);
  std::unique_ptr<Options> compute_options(const Position& pos, bool first_only);
  // The memo key of a position: its text, except where the text's difference cannot
  // matter (an Annotate key).
  std::string memo_key(const Position& pos) const;
  bool is_location_mark(const schedule::Arg& loop) const;
  // Whether the script's variable `index` of `type` still resolves (memoized: the state
  // is fixed, and Schedule::is_valid throws internally for dead ones).
  bool is_valid(schedule::RVType type, size_t index) const;
  // Whether `loop` resolves to a loop above the block `block` resolves to.
  bool loop_above_block(const schedule::Arg& block, const schedule::Arg& loop) const;
  // Whether some other block below `loop` writes a buffer `block` reads (true when
  // either does not resolve: the trial decides).
  bool loop_holds_producer(const schedule::Arg& block, const schedule::Arg& loop) const;
  // Fuse's first preconditions (the loops resolve, are distinct and form a chain of only
  // children); false means the trial would fail.
  bool fuse_chain_possible(const std::vector<schedule::Arg>& loops) const;
  // Whether the last failed trial broke a precondition of ComputeAt/ReverseComputeAt's
  // block alone (one every other non-mark loop would break too).
  bool last_failure_block_only(schedule::InstructionKind kind) const;
  std::vector<std::pair<schedule::Arg, std::string>> typing_pool(const Position& pos, const SlotSchema& slot) const;
  std::vector<schedule::Arg> completion_pool(const Position& pos, const SlotSchema& slot) const;
  std::vector<std::vector<schedule::Arg>> rest_extensions(const Position& pos, const SlotSchema& slot) const;

  std::shared_ptr<const ReplayState> state_;
  OracleCounters* counters_;
  WitnessMemo* witnesses_;
  std::optional<Witness> last_success_;  // the last trial that applied
  std::string last_error_name_, last_error_reason_;  // the last trial that failed (ScheduleError)
  schedule::Schedule scratch_;  // failed trials leave it unchanged; re-copied after a success
  std::vector<std::string> block_names_;
  std::unordered_map<const ir::BlockNode*, std::vector<const ir::ForNode*>> loops_above_;
  std::unordered_map<std::string, bool> feasible_memo_;
  std::unordered_map<std::string, std::unique_ptr<Options>> options_memo_;
  std::unordered_map<std::string, bool> continuation_memo_;
  struct TrialOutcome {
    bool ok = false;
    std::string error_name, error_reason;
  };
  std::unordered_map<std::string, TrialOutcome> trial_memo_;  // by the instruction tried
  mutable std::vector<int8_t> valid_cache_[3];  // per type and index: -1 unknown, 0, 1
};

}  // namespace dragon::script::decoding
