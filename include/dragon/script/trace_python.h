// TVM's Python text form of a trace (Trace.__str__: one `sch.<method>(...)` call per
// line, keyword arguments, decisions inline), written from the script schema. Write-only:
// it exists to compare the compact script against the forms TVM users know.
#pragma once

#include <string>

#include "dragon/schedule/trace.h"

namespace dragon::script {

// Random variables are named as in TVM's JSON (one counter, definition order: b0, l1,
// v2, ...); every attr is written, defaults included. Throws UserError, as encode does,
// for an instruction that does not fit its kind's schema.
std::string trace_to_python(const schedule::Trace& trace);

}  // namespace dragon::script
