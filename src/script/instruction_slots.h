// Internal: an Instruction seen through its kind's schema, the values of each slot.
// Shared by the encoder and the Python writer.
#pragma once

#include <string>
#include <vector>

#include "dragon/schedule/instruction.h"
#include "dragon/script/script_schema.h"

namespace dragon::script::detail {

// The values of each slot of `inst` (several for lists and rests, the output count for a
// kCount slot). Throws UserError "cannot write instruction INDEX (Kind) ...: why" when an
// input or attr is missing, extra, or not a list where the schema has one. Types are
// the caller's to check.
std::vector<std::vector<schedule::Arg>> slot_values(const schedule::Instruction& inst, const KindSchema& schema,
                                                    size_t index);

[[noreturn]] void fail_instruction(size_t index, schedule::InstructionKind kind, const std::string& message);

}  // namespace dragon::script::detail
