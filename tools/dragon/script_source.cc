// Script files for `dragon apply` and `dragon run --script`.
#include "script_source.h"

#include <fmt/format.h>

#include "dragon/schedule/schedule.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {

ir::PrimFunc apply_script_file(const ir::PrimFunc& func, const std::string& path) {
  std::string text = read_text_file(path);
  schedule::Trace trace;
  try {
    trace = schedule::trace_from_json(text);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
  schedule::Schedule sch(func);
  try {
    trace.apply_to(sch);
  } catch (const schedule::ScheduleError& e) {
    // Every replayed instruction records itself once, so the trace length so far is the
    // index of the one that failed.
    throw UserError(fmt::format("{}: instruction {} failed: {}", path, sch.trace().size(), e.what()));
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
  return sch.func();
}

}  // namespace dragon::cli
