// Internal: an Instruction seen through its kind's schema, the values of each slot, and
// the rewrite of legacy TVM layouts. Shared by the encoder and the Python writer.
#pragma once

#include <string>
#include <vector>

#include "dragon/schedule/instruction.h"
#include "dragon/script/script_schema.h"

namespace dragon::script::detail {

// TVM versions before v0.18 wrote Split with one attr and bools as 0/1; before v0.14
// CacheWrite without its consumer list; before v0.12 TransformLayout with its map as an
// attr. They mean the pinned dialect's instruction.
schedule::Instruction normalize_legacy(schedule::Instruction inst);

// The values of each slot of `inst` (several for lists and rests, the output count for a
// kCount slot). Throws UserError "cannot write instruction INDEX (Kind) ...: why" when an
// input or attr is missing, extra, or not a list where the schema has one. Types are
// the caller's to check.
std::vector<std::vector<schedule::Arg>> slot_values(const schedule::Instruction& inst, const KindSchema& schema,
                                                    size_t index);

[[noreturn]] void fail_instruction(size_t index, schedule::InstructionKind kind, const std::string& message);

}  // namespace dragon::script::detail
