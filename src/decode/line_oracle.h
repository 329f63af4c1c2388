// Internal: the semantic half of constrained decoding. A LineOracle holds the state after
// the complete lines and answers, for a partial line (its committed words), which next
// words can still lead to a valid line, memoized per position. It reads words with
// line_position.h, searches completions with completion_search.h and judges them with
// line_judge.h (the schedule's checks, trials where they cannot tell). The character
// walk and the caches per prefix are constrained_decoder.cc's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "completion_search.h"
#include "line_judge.h"
#include "line_position.h"
#include "replay_state.h"

namespace dragon::decode {

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
  std::span<const script::ShortName> string_names;
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

// What the oracles of one decoder share: per kind the last completion that applied (by
// InstructionKind), and what the judges learnt about the cost of their questions.
struct DecoderMemory {
  std::unordered_map<int, Witness> witnesses;
  JudgeStats judge_stats;
};

class LineOracle {
 public:
  // `memory` (optional) is shared by the oracles of one decoder.
  LineOracle(std::shared_ptr<const ReplayState> state, OracleCounters* counters, DecoderMemory* memory = nullptr);

  // The position after `word` is committed at `pos` (line_position.h's read_word).
  std::optional<Position> advance(const Position& pos, std::string_view word) const {
    return read_word(*state_, pos, word);
  }
  // Whether some completion of `pos` is a valid line (memoized by its text).
  bool feasible(const Position& pos);
  // The options at `pos` (memoized by its text).
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

  // The exact shortcuts (the schedule's checks in place of trials, prefixes ruled out by
  // them, witnesses: README.md) are on by default; tests turn them off to check that
  // every answer is the same without them. Set before any query.
  void set_shortcuts(bool on);

  // For tests: the outcome the schedule's check gives `inst` on this state (nullopt: it
  // cannot tell), and the outcome of applying it.
  std::optional<bool> rule_outcome(const schedule::Instruction& inst, const std::optional<schedule::Arg>& decision = {},
                                   std::optional<int64_t> count = {}) const {
    return judge_.check_outcome(inst, decision, count);
  }
  bool trial_outcome(const schedule::Instruction& inst, const std::optional<schedule::Arg>& decision = {},
                     std::optional<int64_t> count = {}) const {
    return judge_.trial_outcome(inst, decision, count);
  }
  // For tests: whether the check says that `value` in slot `slot` of `kind` (after the
  // values `before`) fails whatever the later slots hold.
  bool operand_ruled_out(schedule::InstructionKind kind, size_t slot, const schedule::Arg& value,
                         const std::vector<schedule::Arg>& before);

 private:
  std::unique_ptr<Options> compute_options(const Position& pos, bool first_only);
  // The memo key of a position: its text, except where the text's difference cannot
  // matter (an Annotate key, README.md).
  std::string memo_key(const Position& pos) const;

  std::shared_ptr<const ReplayState> state_;
  OracleCounters* counters_;
  DecoderMemory* memory_;
  bool shortcuts_ = true;
  StateVariables vars_;
  LineJudge judge_;
  CompletionSearch search_;
  std::unordered_map<std::string, bool> feasible_memo_;
  std::unordered_map<std::string, std::unique_ptr<Options>> options_memo_;
  std::unordered_map<std::string, bool> continuation_memo_;
};

}  // namespace dragon::decode
