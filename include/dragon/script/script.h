// The compact script format: encode a Trace to its one canonical script and decode a
// script back to the exact Trace, whole or line by line (docs/script-format.md).
// Decoding needs no workload. Not the JSON codec (schedule/trace_json.h), not the
// model's tokenizer (tokenizer.h), and never replays anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/schedule/trace.h"
#include "dragon/support/error.h"

namespace dragon::script {

// A malformed script: what() is "LINE:COLUMN: message" (1-based; the column is the byte
// of the offending token, or one past the line's end when something is missing).
class ScriptError : public UserError {
 public:
  ScriptError(int line, int column, std::string message);
  int line() const { return line_; }
  int column() const { return column_; }
  // The message without its position.
  const std::string& message() const { return message_; }

 private:
  int line_;
  int column_;
  std::string message_;
};

// The canonical script of `trace`: one line per instruction, each ending in '\n'.
// Legacy TVM layouts (Split with one attr, CacheWrite without its consumer list) are
// first rewritten to the pinned dialect. Throws UserError naming the instruction when the
// trace does not fit the schema (script_schema.h): a wrong input or attr count or type,
// an input not defined earlier, a decision on a kind without one, a non-finite float.
std::string encode(const schedule::Trace& trace);

// The trace of `script`; decode(encode(t)) == t. Accepts blank lines, comments ('#' to
// the end of a line, outside quotes) and extra spaces or tabs between tokens; everything
// else must be canonical (numbers, quoting, short names, omitted defaults), so a script
// without comments or extra spaces decodes only if encode(decode(s)) == s.
// Throws ScriptError on the first malformed line.
schedule::Trace decode(std::string_view script);

// Whether `script` is exactly the canonical spelling of the trace it decodes to
// (false when it does not decode).
bool is_canonical(std::string_view script);

// Decodes a script one line at a time, keeping the random-variable environment, so a
// prefix can be checked as it is produced (constrained decoding, streaming).
class LineDecoder {
 public:
  LineDecoder() = default;

  // Decodes one line (without its '\n'; a trailing '\r' is ignored). Returns the index
  // of the instruction it appended to trace(), or nullopt for a blank or comment line.
  // On error throws ScriptError (line number = lines fed before + 1) and changes nothing.
  std::optional<size_t> feed(std::string_view line);
  // Throws as feed() would, but never changes anything.
  void check(std::string_view line) const;

  // Lines fed successfully so far (blank and comment lines count).
  int lines() const { return lines_; }
  // How many random variables of `type` are defined: b0..b(n-1) are valid block names.
  int64_t defined(schedule::RVType type) const { return counts_[static_cast<size_t>(type)]; }
  const schedule::Trace& trace() const { return trace_; }
  schedule::Trace take_trace() && { return std::move(trace_); }

 private:
  struct Decoded;
  Decoded parse(std::string_view line) const;

  schedule::Trace trace_;
  int lines_ = 0;
  int64_t counts_[3] = {0, 0, 0};  // by RVType
  // Per type, the trace's RandomVar of each per-type index (global ids, definition order).
  std::vector<schedule::RandomVar> vars_[3];
  int64_t next_id_ = 0;
};

}  // namespace dragon::script
