// Reading the JSON-lines trace files the injection library writes.
#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "dragon/profile/trace_format.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::profile {
namespace {

std::array<int32_t, 3> dims(const nlohmann::json& j) {
  std::array<int32_t, 3> d{1, 1, 1};
  if (j.is_array()) {
    for (size_t i = 0; i < std::min<size_t>(3, j.size()); ++i) d[i] = j[i].get<int32_t>();
  }
  return d;
}

TraceEvent parse_event(EventKind kind, const nlohmann::json& j, int64_t pid) {
  TraceEvent e;
  e.kind = kind;
  e.pid = pid;
  e.name = j.value("n", std::string());
  e.start_ns = j.at("s").get<uint64_t>();
  e.end_ns = j.at("e").get<uint64_t>();
  e.device = j.value("d", 0u);
  e.stream = j.value("st", 0u);
  e.bytes = j.value("by", uint64_t{0});
  if (kind == EventKind::kKernel) {
    e.grid = dims(j.value("g", nlohmann::json()));
    e.block = dims(j.value("b", nlohmann::json()));
  }
  if (kind == EventKind::kMemcpy) e.name = "Memcpy " + e.name;
  if (kind == EventKind::kMemset) e.name = "Memset";
  return e;
}

}  // namespace

ProcessTrace parse_trace(std::string_view text, std::string_view path) {
  ProcessTrace trace;
  size_t line_start = 0;
  int line_number = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    bool last = line_end == std::string_view::npos;
    std::string_view line = text.substr(line_start, last ? std::string_view::npos : line_end - line_start);
    line_start = last ? text.size() : line_end + 1;
    ++line_number;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (last) break;  // a process killed while writing its last line
      throw UserError(fmt::format("{}:{}: not a JSON trace record", path, line_number));
    }
    try {
      std::string type = j.at("t").get<std::string>();
      if (type == "process") {
        trace.pid = j.at("pid").get<int64_t>();
        trace.command = j.value("cmd", std::string());
        trace.window_start_ns = j.at("start").get<uint64_t>();
      } else if (type == "kernel") {
        trace.events.push_back(parse_event(EventKind::kKernel, j, trace.pid));
      } else if (type == "memcpy") {
        trace.events.push_back(parse_event(EventKind::kMemcpy, j, trace.pid));
      } else if (type == "memset") {
        trace.events.push_back(parse_event(EventKind::kMemset, j, trace.pid));
      } else if (type == "range") {
        trace.events.push_back(parse_event(EventKind::kRange, j, trace.pid));
      } else if (type == "error") {
        trace.error = j.at("msg").get<std::string>();
      } else if (type == "end") {
        trace.window_end_ns = j.at("end").get<uint64_t>();
        trace.dropped_records = j.value("dropped", uint64_t{0});
        trace.complete = true;
      } else {
        throw UserError(fmt::format("{}:{}: unknown record type '{}'", path, line_number, type));
      }
    } catch (const nlohmann::json::exception& e) {
      throw UserError(fmt::format("{}:{}: malformed trace record: {}", path, line_number, e.what()));
    }
  }
  if (trace.pid == 0 && trace.error.empty()) {
    throw UserError(fmt::format("{}: no process record: not a dragon profile trace", path));
  }
  return trace;
}

std::vector<ProcessTrace> read_trace_dir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) throw UserError("trace folder " + dir + " does not exist");
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("trace-", 0) == 0 && name.size() > 6 && entry.path().extension() == ".jsonl") {
      files.push_back(entry.path().string());
    }
  }
  if (files.empty()) throw UserError("no trace files (trace-<pid>.jsonl) in " + dir);
  std::sort(files.begin(), files.end());
  std::vector<ProcessTrace> traces;
  for (const std::string& file : files) traces.push_back(parse_trace(read_text_file(file), file));
  return traces;
}

}  // namespace dragon::profile
