// Internal: the state of a script after its complete lines (the schedule they built, the
// script's random variables, the codec's line decoder) and the lookups the decoder asks
// of it many times (which index a variable has, whether it still resolves), memoized.
// Not a judge of lines (line_judge.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"

namespace dragon::decode {

struct ReplayState {
  schedule::Schedule sch;
  std::vector<schedule::RandomVar> vars[3];  // per-type index -> the schedule's variable
  // Per loop index: made by SampleComputeLocation (a location mark, which names no loop).
  std::vector<bool> loop_is_location;
  script::LineDecoder decoder;
  explicit ReplayState(schedule::Schedule s) : sch(std::move(s)) {}
};

// One state's variables as the decoder asks about them; answers are memoized (the state
// never changes).
class StateVariables {
 public:
  explicit StateVariables(const ReplayState& state) : state_(state) {}

  const ReplayState& state() const { return state_; }
  // The index of a script variable among those of its type; nullopt for other variables.
  std::optional<size_t> index_of(const schedule::RandomVar& rv) const;
  // Whether the script's variable `index` of `type` still resolves.
  bool is_valid(schedule::RVType type, size_t index) const;
  // Whether a loop variable was made by SampleComputeLocation.
  bool is_location_mark(const schedule::Arg& loop) const;
  // The loop a variable names, or null when it does not resolve.
  const ir::ForNode* loop(const schedule::Arg& loop) const;
  // Whether `value` is the first of the script's variables of its type that stand for
  // what it stands for (the same block, the same loop, the same sampled value); values
  // that are not variables of this state are. The schedule resolves a variable to its
  // block (by name), its loop (by loop variable) or its value and reads only those, so
  // an instruction has the same outcome whichever of such variables it names: a search
  // for a completion tries one per class. Long scripts look the same blocks and loops up
  // again and again (gb Y, gl b7 5, ...): hundreds of variables name a few loops. A
  // variable that does not resolve (invalidated, a location mark) is its own class.
  bool is_representative(const schedule::Arg& value) const;
  // The first variable of `value`'s class (is_representative), or `value` itself.
  schedule::Arg representative(const schedule::Arg& value) const;

 private:
  const ReplayState& state_;
  mutable std::vector<int8_t> valid_[3];  // per type and index: -1 unknown, 0, 1
  // Per variable id, its index among the variables of its type (-1: none); built on use.
  mutable std::vector<int64_t> index_of_;
  mutable bool index_built_ = false;
  // Per type and index: the index of the first variable of its class; built on use.
  const std::vector<size_t>& classes(schedule::RVType type) const;
  mutable std::vector<size_t> class_of_[3];
  mutable bool classes_built_[3] = {false, false, false};
};

}  // namespace dragon::decode
