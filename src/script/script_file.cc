// Script files (script_file.h): reading either form, replaying, and placing errors at the
// file's line and instruction.
#include "dragon/script/script_file.h"

#include <fmt/format.h>

#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"

namespace dragon::script {
namespace {

// A TVM JSON trace starts with '['; anything else is read as a compact script.
bool looks_like_json(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '[';
}

}  // namespace

ScriptFile load(const std::string& path) {
  ScriptFile out;
  out.path = path;
  std::string text = read_text_file(path);
  if (looks_like_json(text)) {
    try {
      out.trace = schedule::trace_from_json(text);
    } catch (const UserError& e) {
      throw ScriptFileError(fmt::format("{}: {}", path, e.what()), path, std::nullopt, std::nullopt);
    }
    return out;
  }
  out.compact = true;
  LineDecoder decoder;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    try {
      if (decoder.feed(line)) {
        out.lines.push_back(decoder.lines());
        out.texts.emplace_back(line);
      }
    } catch (const ScriptError& e) {
      throw ScriptFileError(UserError::at(path, e.line(), e.column(), e.message()).what(), path,
                            ScriptFileError::Position{e.line(), e.column()}, out.lines.size());
    }
    start = end + 1;
  }
  out.trace = std::move(decoder).take_trace();
  return out;
}

schedule::Schedule replay(const ir::PrimFunc& func, const ScriptFile& script) {
  schedule::Schedule sch(func);
  // Every replayed instruction records itself once, so the trace length so far is the
  // index of the one that failed.
  auto where = [&](size_t index) {
    std::string kind(index < script.trace.size() ? schedule::instruction_kind_name(script.trace[index].kind) : "?");
    if (script.compact && index < script.lines.size()) {
      return fmt::format("{}:{}:1: instruction {} ({}) `{}`", script.path, script.lines[index], index, kind,
                         script.texts[index]);
    }
    return fmt::format("{}: instruction {}", script.path, index);
  };
  auto error = [&](const std::string& message, size_t index) {
    std::optional<ScriptFileError::Position> position;
    if (script.compact && index < script.lines.size()) position = ScriptFileError::Position{script.lines[index], 1};
    return ScriptFileError(message, script.path, position, index);
  };
  try {
    script.trace.apply_to(sch);
  } catch (const schedule::ScheduleError& e) {
    const size_t index = sch.trace().size();
    throw error(fmt::format("{} failed: {}", where(index), e.what()), index);
  } catch (const UserError& e) {
    const size_t index = sch.trace().size();
    // Replay's own message already names the instruction; a compact script adds its line.
    if (script.compact) throw error(fmt::format("{}: {}", where(index), e.what()), index);
    throw error(fmt::format("{}: {}", script.path, e.what()), index);
  }
  return sch;
}

}  // namespace dragon::script
