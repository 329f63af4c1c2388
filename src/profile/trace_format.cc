// Trace file names and JSON string escaping, shared by the injection library (which
// must stay small and position independent) and the analyzer.
#include <cstdio>

#include "dragon/profile/trace_format.h"

namespace dragon::profile {

std::string trace_file_name(long pid) { return "trace-" + std::to_string(pid) + ".jsonl"; }

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
