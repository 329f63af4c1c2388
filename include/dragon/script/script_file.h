// Schedule script files, for library users and the CLI alike: either form (a compact
// script, or a trace in TVM's JSON layout, told apart by the first non-blank character)
// read, decoded and replayed, with errors placed at the file's line and instruction.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/trace.h"
#include "dragon/support/error.h"

namespace dragon::script {

// A script file that does not decode or replay. what() is the whole message ("FILE:LINE:
// COL: why" for a compact script, "FILE: why" for a JSON trace); the parts are kept for
// callers that place the error themselves.
class ScriptFileError : public UserError {
 public:
  struct Position {
    int line = 0;    // 1-based
    int column = 0;  // 1-based
  };
  ScriptFileError(const std::string& message, std::string path, std::optional<Position> position,
                  std::optional<size_t> instruction)
      : UserError(message), path_(std::move(path)), position_(position), instruction_(instruction) {}

  const std::string& path() const { return path_; }
  // Where in a compact script; nullopt for a JSON trace.
  const std::optional<Position>& position() const { return position_; }
  // The index in the trace of the instruction that failed to decode or to replay; nullopt
  // when the file as a whole is malformed (JSON that does not parse).
  std::optional<size_t> instruction() const { return instruction_; }

 private:
  std::string path_;
  std::optional<Position> position_;
  std::optional<size_t> instruction_;
};

struct ScriptFile {
  std::string path;
  bool compact = false;            // a compact script (else a TVM JSON trace)
  schedule::Trace trace;
  std::vector<int> lines;          // compact: the 1-based line of each instruction
  std::vector<std::string> texts;  // compact: the text of each instruction's line
};

// Reads and decodes the file. Throws ScriptFileError for a malformed script
// ("FILE:LINE:COL: why", with the index the instruction on that line would have had) or
// JSON trace ("FILE: trace JSON: ..."), and UserError for a file that cannot be read.
ScriptFile load(const std::string& path);

// Replays the script on `func`: the schedule, with its trace and function. Throws
// ScriptFileError naming the failing instruction ("FILE:7:1: instruction 5 (Split)
// `sp l2 v0 v1` failed: ..." for a compact script, "FILE: instruction 5 failed: ..." for
// JSON).
schedule::Schedule replay(const ir::PrimFunc& func, const ScriptFile& script);

}  // namespace dragon::script
