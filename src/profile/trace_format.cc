// Trace file names and JSON string escaping, shared by the injection library (which
// must stay small and position independent) and the analyzer.
#include <cstdio>

#include "dragon/profile/trace_format.h"
#include "dragon/support/error.h"

namespace dragon::profile {

std::string trace_file_name(long pid) { return "trace-" + std::to_string(pid) + ".jsonl"; }

std::string activity_selection_error(std::string_view list, ActivitySelection* selection) {
  if (list.empty()) return "no activity selected: choose from kernel, memcpy, memset, nvtx";
  ActivitySelection chosen{false, false, false, false};
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string_view::npos) end = list.size();
    std::string_view name = list.substr(begin, end - begin);
    if (name == "kernel") {
      chosen.kernel = true;
    } else if (name == "memcpy") {
      chosen.memcpy = true;
    } else if (name == "memset") {
      chosen.memset = true;
    } else if (name == "nvtx") {
      chosen.nvtx = true;
    } else {
      return "unknown activity '" + std::string(name) + "' in '" + std::string(list) +
             "': choose from kernel, memcpy, memset, nvtx, separated by commas";
    }
    begin = end + 1;
  }
  *selection = chosen;
  return {};
}

ActivitySelection parse_activity_selection(std::string_view list) {
  ActivitySelection selection;
  std::string error = activity_selection_error(list, &selection);
  if (!error.empty()) throw UserError(error);
  return selection;
}

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace dragon::profile
