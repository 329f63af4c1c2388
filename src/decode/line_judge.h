// Internal: whether a script line applies on the state before it, judged by the
// schedule's own check of the instruction (Schedule::check: the primitive's
// preconditions, no new IR built) or, where that cannot tell, by applying it to a
// scratch copy of the schedule (a trial). Also commits a valid line into the next state.
// Not the search for completions (completion_search.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dragon/schedule/schedule.h"
#include "line_position.h"
#include "replay_state.h"

namespace dragon::decode {

struct OracleCounters {
  int64_t positions = 0;
  int64_t trials = 0;  // instructions applied to a scratch schedule
};

// A completion that applied: every slot written so far (the rest at their defaults) and
// the decision. Kept per kind across lines: the completion that let a mnemonic apply
// before the last line usually still applies after it, so it is tried first.
struct Witness {
  std::vector<schedule::Arg> values;
  std::optional<std::vector<int64_t>> decision;
};

// What the judges of one decoder learn about the cost of their questions (shared by the
// line states). Cost decisions only: every answer is the same either way.
// - Prefixes of a kind and length that the check never rules out (it needs the later
//   slots) are not asked about again: the search finds the same answer.
// - Outcomes of a kind whose lines are seldom judged twice on one state are not memoized:
//   building the key costs more than the checks it saves. (Trials are always memoized.)
class JudgeStats {
 public:
  bool ask_prefix(schedule::InstructionKind kind, size_t written) const;
  void prefix_asked(schedule::InstructionKind kind, size_t written, bool ruled_out);
  bool memoize(schedule::InstructionKind kind) const;
  void memo_looked_up(schedule::InstructionKind kind, bool hit);

 private:
  struct Tally {
    int asked = 0;
    int answered = 0;  // ruled out, or found in the memo
  };
  std::unordered_map<size_t, Tally> prefixes_;  // by kind * 64 + slots written
  std::unordered_map<size_t, Tally> memos_;     // by kind
};

class LineJudge {
 public:
  // `stats` (optional, shared by the judges of one decoder) steers which questions are
  // asked and memoized; without it, every prefix is asked about and every outcome kept.
  LineJudge(std::shared_ptr<const ReplayState> state, OracleCounters* counters, JudgeStats* stats = nullptr)
      : state_(std::move(state)), counters_(counters), stats_(stats) {}

  // Checks answer where they can (on by default); off, every line is judged by a trial.
  void set_checks(bool on) { checks_ = on; }

  // Whether the line `pos` (its written slots, the rest at their defaults) with `decision`
  // applies, its decision kept as written and a written count equal to the outputs (the
  // script must say what runs). When `next` is given, the line is applied for real and
  // `next` receives the state after it (its text fed to the codec's line decoder).
  bool applies(const Position& pos, const std::optional<std::vector<int64_t>>& decision,
               std::shared_ptr<ReplayState>* next = nullptr);
  // Whether every line of `kind` whose slots hold `values` fails, by the schedule's check
  // of the instruction with the later operands unknown (and those of the slots before
  // `first_known`).
  bool fails(const KindSchema& kind, const std::vector<schedule::Arg>& values, size_t first_known = 0);
  // fails(kind, values) where the statistics say the check may rule it out; false (not
  // known to fail) where they say it never does.
  bool prefix_ruled_out(const KindSchema& kind, const std::vector<schedule::Arg>& values);
  // The last line that applied (since the last reset): a witness for its kind.
  std::optional<Witness>& last_success() { return last_success_; }

  // For tests: the outcome of applying `inst` to a copy of the state.
  bool trial_outcome(const schedule::Instruction& inst, const std::optional<schedule::Arg>& decision,
                     std::optional<int64_t> count) const;
  // For tests: the check's outcome for `inst` (nullopt when it cannot tell).
  std::optional<bool> check_outcome(const schedule::Instruction& inst, const std::optional<schedule::Arg>& decision,
                                    std::optional<int64_t> count) const;

 private:
  bool commit(const Position& pos, std::vector<schedule::RandomVar> outputs, std::shared_ptr<ReplayState>* next);
  // The outcome memoized for `key`, if any.
  std::optional<bool> memoized(const std::string& key) const;

  std::shared_ptr<const ReplayState> state_;
  OracleCounters* counters_;
  JudgeStats* stats_;
  bool checks_ = true;
  std::optional<Witness> last_success_;
  // Outcomes by the exact instruction judged (the same completion is met by a position's
  // search and by its next words'), and of instruction prefixes.
  std::unordered_map<std::string, bool> outcomes_;
  // Reused for every line judged: the instruction and the memo key (filling them costs
  // less than allocating them anew).
  Draft draft_;
  std::string key_;
  // Failed trials leave it unchanged; after a success it is dropped and copied again from
  // the state only when the next trial needs it (many states never try again).
  std::optional<schedule::Schedule> scratch_;
  // The last trial that applied (by its exact instruction), with the schedule after it:
  // a line's final judgement is a trial of it, then committed from it.
  struct AppliedTrial {
    std::string key;
    schedule::Schedule sch;
    std::vector<schedule::RandomVar> outputs;
  };
  std::optional<AppliedTrial> last_applied_;
};

}  // namespace dragon::decode
