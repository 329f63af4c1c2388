// The parser of the canonical IR text (docs/ir-text.md): text back to a PrimFunc, with
// every type, rank and scoping rule checked. Not a script parser (script/ owns that).
#pragma once

#include <string_view>

#include "dragon/ir/function.h"
#include "dragon/support/error.h"

namespace dragon::ir {

// Parses one function. Malformed input of any kind throws UserError
// "source:line:column: message"; it never throws InternalError. print_function of the
// result reproduces a canonical input byte for byte.
PrimFunc parse_function(std::string_view text, std::string_view source_name = "<text>");

}  // namespace dragon::ir
