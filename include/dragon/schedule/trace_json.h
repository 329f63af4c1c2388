// The JSON form of a Trace, in TVM's layout (REFERENCE-metaschedule.md section 3):
// [[[kind, inputs, attrs, outputs], ...], [[inst_index, decision], ...]]. Not the compact
// script format (script/ owns that).
#pragma once

#include <string>
#include <string_view>

#include "dragon/schedule/trace.h"

namespace dragon::schedule {

// Random variables are named by one global counter in definition order ("b0", "l1",
// "v2"); string inputs are wrapped in extra quotes, the null input is "None"; attrs are
// literal. Compact (no spaces), deterministic.
std::string trace_to_json(const Trace& trace);
// Parses the text written by trace_to_json (and TVM's, with GetSBlock-style aliases).
// Malformed input throws UserError naming the instruction index and what was wrong.
Trace trace_from_json(std::string_view text);

}  // namespace dragon::schedule
