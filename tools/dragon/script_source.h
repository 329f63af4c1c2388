// Applying a schedule script file (a trace in TVM's JSON layout) to a function, with
// errors that name the file and the failing instruction.
#pragma once

#include <string>

#include "dragon/ir/function.h"

namespace dragon::cli {

// Throws UserError "FILE: ..." for an unreadable or malformed script, and for a
// primitive whose precondition fails ("FILE: instruction 7 (Split) failed: ...").
ir::PrimFunc apply_script_file(const ir::PrimFunc& func, const std::string& path);

}  // namespace dragon::cli
