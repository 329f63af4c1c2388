// Script files for `dragon apply`, `dragon run --script` and `dragon script`: reading
// either form, replaying, and placing errors at the file's line and instruction.
#include "script_source.h"

#include <fmt/format.h>

#include "dragon/schedule/schedule.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {

bool looks_like_json(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '[';
}

ScriptFile load_script_file(const std::string& path) {
  ScriptFile out;
  out.path = path;
  std::string text = read_text_file(path);
  if (looks_like_json(text)) {
    try {
      out.trace = schedule::trace_from_json(text);
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: {}", path, e.what()));
    }
    return out;
  }
  out.compact = true;
  script::LineDecoder decoder;
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
    } catch (const script::ScriptError& e) {
      throw UserError::at(path, e.line(), e.column(), e.message());
    }
    start = end + 1;
  }
  out.trace = std::move(decoder).take_trace();
  return out;
}

schedule::Schedule replay_script(const ir::PrimFunc& func, const ScriptFile& script) {
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
  try {
    script.trace.apply_to(sch);
  } catch (const schedule::ScheduleError& e) {
    throw UserError(fmt::format("{} failed: {}", where(sch.trace().size()), e.what()));
  } catch (const UserError& e) {
    // Replay's own message already names the instruction; add the file and line.
    if (script.compact) throw UserError(fmt::format("{}: {}", where(sch.trace().size()), e.what()));
    throw UserError(fmt::format("{}: {}", script.path, e.what()));
  }
  return sch;
}

ir::PrimFunc apply_script(const ir::PrimFunc& func, const ScriptFile& script) {
  return replay_script(func, script).func();
}

ir::PrimFunc apply_script_file(const ir::PrimFunc& func, const std::string& path) {
  return apply_script(func, load_script_file(path));
}

}  // namespace dragon::cli
