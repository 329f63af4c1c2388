// Replaying one instruction on a schedule, as Trace::apply_to replays each of its
// instructions (by the kind's declaration, instruction_signature.h). Not trace replay
// (trace.h) and not the primitives themselves (schedule.h).
#pragma once

#include <optional>
#include <vector>

#include "dragon/schedule/instruction.h"
#include "dragon/schedule/schedule.h"

namespace dragon::schedule {

// Applies `inst` to `sch`: its inputs refer to `sch`'s random variables (its outputs are
// ignored); `decision` is a sampling instruction's decision (nullopt: sample afresh).
// Returns the new random variables in order. Throws what the primitive throws
// (ScheduleError for a failed precondition, UserError for malformed inputs or attrs).
std::vector<RandomVar> apply_instruction(Schedule& sch, const Instruction& inst, const std::optional<Arg>& decision);

}  // namespace dragon::schedule
