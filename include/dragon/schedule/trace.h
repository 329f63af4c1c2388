// Trace: the instructions a schedule executed, in order, with the decisions of its
// sampling instructions; replay onto an unscheduled function, decision changes and
// simplification. The JSON codec is in trace_json.h; the compact script is script/'s.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/schedule/instruction.h"

namespace dragon::schedule {

class Schedule;

class Trace {
 public:
  Trace() = default;

  void append(Instruction inst, std::optional<Arg> decision = std::nullopt);
  const std::vector<Instruction>& instructions() const { return insts_; }
  size_t size() const { return insts_.size(); }
  const Instruction& operator[](size_t i) const { return insts_.at(i); }
  // The decision of instruction `index`, if it has one.
  std::optional<Arg> decision(size_t index) const;
  const std::map<size_t, Arg>& decisions() const { return decisions_; }

  // Index of the EnterPostproc marker, if any.
  std::optional<size_t> postproc_start() const;
  // The trace up to (not including) EnterPostproc, if there is one.
  Trace without_postproc() const;
  // The trace with the decision of instruction `index` (a sampling instruction) replaced,
  // truncated at EnterPostproc when `remove_postproc` (how mutators propose candidates).
  Trace with_decision(size_t index, Arg decision, bool remove_postproc = true) const;
  // Drops pure instructions (lookups, samples) whose outputs nothing later uses,
  // repeatedly, and optionally the postprocessing part.
  Trace simplified(bool remove_postproc = false) const;

  // Replays every instruction on `sch` (normally a fresh schedule of the unscheduled
  // function), mapping the recorded random variables to the new ones. Recorded decisions
  // are reused (perfect tiles repaired to the current extents); `decide`, when given, may
  // override them (return nullopt to sample afresh). Throws ScheduleError when an
  // instruction's precondition fails and UserError for malformed instructions.
  using DecisionProvider =
      std::function<std::optional<Arg>(size_t index, const Instruction& inst, const std::optional<Arg>& recorded)>;
  void apply_to(Schedule& sch, bool remove_postproc = false, const DecisionProvider& decide = {}) const;

  // The same trace with random variables renumbered in definition order (b0, l1, v2, ...),
  // as JSON and text spell them.
  Trace canonical() const;
  // Equal up to renaming of random variables (canonical forms equal).
  friend bool operator==(const Trace& a, const Trace& b);

  // One line per instruction, decisions inline: for logs and test failures.
  std::string to_string() const;

 private:
  std::vector<Instruction> insts_;
  std::map<size_t, Arg> decisions_;
};

}  // namespace dragon::schedule
