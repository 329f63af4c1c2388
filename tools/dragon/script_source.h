// Schedule script files for `dragon apply`, `dragon run --script` and `dragon script`:
// either form (a compact script or a trace in TVM's JSON layout, told apart by the first
// non-blank character), with errors that name the file, the line and the instruction.
#pragma once

#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/trace.h"

namespace dragon::cli {

struct ScriptFile {
  std::string path;
  bool compact = false;          // a compact script (else TVM JSON)
  schedule::Trace trace;
  std::vector<int> lines;        // compact: the 1-based line of each instruction
  std::vector<std::string> texts;  // compact: the text of each instruction's line
};

// Whether `text` is a TVM JSON trace (its first non-blank character is '[').
bool looks_like_json(const std::string& text);

// Reads and decodes the file; throws UserError "FILE:LINE:COL: why" for a malformed
// compact script, "FILE: trace JSON: ..." for malformed JSON.
ScriptFile load_script_file(const std::string& path);

// Replays the script on `func` and returns the schedule (its trace and function); errors
// as apply_script's.
schedule::Schedule replay_script(const ir::PrimFunc& func, const ScriptFile& script);

// Replays the script on `func`. Throws UserError naming the file and the failing
// instruction ("FILE:7:1: instruction 5 (Split) `sp l2 v0 v1` failed: ..." for a compact
// script, "FILE: instruction 5 failed: ..." for JSON).
ir::PrimFunc apply_script(const ir::PrimFunc& func, const ScriptFile& script);

// load_script_file + apply_script.
ir::PrimFunc apply_script_file(const ir::PrimFunc& func, const std::string& path);

}  // namespace dragon::cli
