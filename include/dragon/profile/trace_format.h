// The trace file format shared by the injection library (writer) and the analyzer
// (reader): JSON lines, one per record, so a crash loses at most the last line.
//   {"t":"process","pid":12,"cmd":"python3","start":123}
//   {"t":"kernel","n":"_Z6kernelPf","s":1,"e":2,"d":0,"st":7,"g":[1,1,1],"b":[256,1,1]}
//   {"t":"memcpy","n":"HtoD","s":1,"e":2,"d":0,"st":7,"by":4096}
//   {"t":"memset","s":1,"e":2,"d":0,"st":7,"by":4096}
//   {"t":"range","n":"measure","s":1,"e":2}
//   {"t":"error","msg":"..."}
//   {"t":"end","end":456,"dropped":0}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dragon/profile/trace_event.h"

namespace dragon::profile {

// What the injection library records, chosen with DRAGON_PROFILE_ACTIVITIES (a comma
// list of these names; all when unset): kernels, copies, memsets and NVTX ranges.
struct ActivitySelection {
  bool kernel = true;
  bool memcpy = true;
  bool memset = true;
  bool nvtx = true;
};
// Parses "kernel,memcpy"; an empty list or an unknown name is a UserError naming the
// valid ones. Does not throw into the injection library: see activity_selection_error.
ActivitySelection parse_activity_selection(std::string_view list);
// The same check without exceptions: the error text, or empty when `list` is valid
// (then *selection is filled).
std::string activity_selection_error(std::string_view list, ActivitySelection* selection);

// Trace files of a run: DIR/trace-<pid>.jsonl.
std::string trace_file_name(long pid);

// Escapes a string for a JSON string literal (quotes not included).
std::string json_escape(std::string_view text);

// Parses one trace file's text; throws UserError "PATH:LINE: what" on a malformed line.
// A truncated last line (a process killed mid-write) is tolerated and dropped.
ProcessTrace parse_trace(std::string_view text, std::string_view path);

// Reads every trace file in `dir`; throws UserError when the folder has none.
std::vector<ProcessTrace> read_trace_dir(const std::string& dir);

}  // namespace dragon::profile
