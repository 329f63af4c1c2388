// JSON lines of the tuning database (jsonl.h): the line writers, export and import.
// Lines are written field by field in a fixed order, so one record has one spelling; the
// record's fingerprint (database.cc) is a hash of that spelling.
#include "dragon/db/jsonl.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/support/compressed_jsonl.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "record_validation.h"
#include "import_batch.h"

namespace dragon::db {
namespace {

using nlohmann::json;

constexpr std::string_view kFormatName = "little-dragon-tuning-records";
constexpr int kFormatVersion = 1;

std::string quote(std::string_view text) { return json(text).dump(); }
std::string quote_or_null(const std::optional<std::string>& text) { return text ? quote(*text) : "null"; }

// Samples at float precision: the shortest text that reads back to the same float, not
// the longer text of the double the float widens to.
std::string samples_array(std::span<const float> samples) {
  std::string out = "[";
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i > 0) out += ',';
    out += fmt::format("{}", samples[i]);
  }
  return out + "]";
}

// ---- reading fields, with "SOURCE:LINE: field: why" errors

struct LineContext {
  const std::string& source;
  int64_t line;

  [[noreturn]] void fail(std::string_view message) const {
    throw UserError(fmt::format("{}:{}: {}", source, line, message));
  }

  const json& field(const json& object, std::string_view name) const {
    auto it = object.find(name);
    if (it == object.end()) fail(fmt::format("missing field '{}'", name));
    return *it;
  }

  std::string text(const json& object, std::string_view name) const {
    const json& value = field(object, name);
    if (!value.is_string()) fail(fmt::format("field '{}' must be a string", name));
    return value.get<std::string>();
  }

  std::optional<std::string> optional_text(const json& object, std::string_view name) const {
    const json& value = field(object, name);
    if (value.is_null()) return std::nullopt;
    if (!value.is_string()) fail(fmt::format("field '{}' must be a string or null", name));
    return value.get<std::string>();
  }

  void only_fields(const json& object, std::initializer_list<std::string_view> names) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      if (std::find(names.begin(), names.end(), it.key()) == names.end()) {
        fail(fmt::format("unknown field '{}'", it.key()));
      }
    }
  }

  template <typename F>
  auto guard(F&& parse) const {
    try {
      return parse();
    } catch (const UserError& e) {
      fail(e.what());
    }
  }
};

Workload parse_workload(const json& object, const LineContext& at) {
  at.only_fields(object, {"kind", "hash", "spec", "ir"});
  Workload w;
  w.hash = at.guard([&] { return parse_workload_hash(at.text(object, "hash")); });
  w.spec = at.optional_text(object, "spec");
  w.ir = at.text(object, "ir");
  return w;
}

Record parse_record(const json& object, const LineContext& at) {
  at.only_fields(object, {"kind", "workload", "target", "hardware", "status", "error", "script", "kernel_hash",
                          "samples_ms", "commit", "measured_at", "origin"});
  Record r;
  r.key.workload = at.guard([&] { return parse_workload_hash(at.text(object, "workload")); });
  const json& target = at.field(object, "target");
  const json& hardware = at.field(object, "hardware");
  if (!target.is_object()) at.fail("field 'target' must be an object {\"name\", \"arch\"}");
  if (!hardware.is_object()) at.fail("field 'hardware' must be an object {\"device\", \"driver\"}");
  at.only_fields(target, {"name", "arch"});
  at.only_fields(hardware, {"device", "driver"});
  r.key.target = Target{at.text(target, "name"), at.text(target, "arch")};
  r.key.hardware = Hardware{at.text(hardware, "device"), at.text(hardware, "driver")};
  const std::string status = at.text(object, "status");
  std::optional<RecordStatus> parsed = parse_record_status(status);
  if (!parsed) at.fail(fmt::format("unknown status '{}'", status));
  r.status = *parsed;
  r.error = at.optional_text(object, "error");
  r.script = at.text(object, "script");
  r.kernel_hash = at.optional_text(object, "kernel_hash");
  const json& samples = at.field(object, "samples_ms");
  if (!samples.is_array()) at.fail("field 'samples_ms' must be an array of numbers");
  for (const json& sample : samples) {
    if (!sample.is_number()) at.fail("field 'samples_ms' must be an array of numbers");
    r.samples_ms.push_back(static_cast<float>(sample.get<double>()));
  }
  r.commit = at.optional_text(object, "commit");
  if (std::optional<std::string> time = at.optional_text(object, "measured_at")) {
    r.measured_at = at.guard([&] { return parse_time(*time); });
  }
  r.origin = at.text(object, "origin");
  return r;
}

}  // namespace

std::string jsonl_header_line() {
  return fmt::format(R"({{"format":{},"version":{}}})", quote(kFormatName), kFormatVersion);
}

std::string workload_to_json_line(const Workload& w) {
  return fmt::format(R"({{"kind":"workload","hash":"{}","spec":{},"ir":{}}})", format_workload_hash(w.hash),
                     quote_or_null(w.spec), quote(w.ir));
}

std::string record_to_json_line(const Record& r) {
  return fmt::format(
      R"({{"kind":"record","workload":"{}","target":{{"name":{},"arch":{}}},"hardware":{{"device":{},"driver":{}}},)"
      R"("status":"{}","error":{},"script":{},"kernel_hash":{},"samples_ms":{},"commit":{},"measured_at":{},"origin":{}}})",
      format_workload_hash(r.key.workload), quote(r.key.target.name), quote(r.key.target.arch),
      quote(r.key.hardware.device), quote(r.key.hardware.driver), record_status_id(r.status), quote_or_null(r.error),
      quote(r.script), quote_or_null(r.kernel_hash), samples_array(r.samples_ms), quote_or_null(r.commit),
      r.measured_at ? quote(format_time(*r.measured_at)) : std::string("null"), quote(r.origin));
}

ExportSummary export_jsonl(const Database& db, std::ostream& out, const RecordFilter& filter) {
  ExportSummary summary;
  out << jsonl_header_line() << '\n';
  const bool everything =
      !filter.workload && !filter.target && !filter.hardware && !filter.device && !filter.status && !filter.origin;
  // Workloads first, in the order they were added, so an import defines each before use:
  // every workload for a full export, else those the selected records belong to.
  for (const Workload& w : db.workloads()) {
    if (!everything) {
      if (filter.workload && *filter.workload != w.hash) continue;
      RecordFilter of_workload = filter;
      of_workload.workload = w.hash;
      if (db.count(of_workload) == 0) continue;
    }
    out << workload_to_json_line(w) << '\n';
    ++summary.workloads;
  }
  db.for_each_record(filter, [&](const StoredRecord& r) {
    out << record_to_json_line(r.record) << '\n';
    ++summary.records;
  });
  out.flush();
  if (!out) throw UserError(fmt::format("writing the export of {} failed", db.path()));
  return summary;
}

namespace {

bool is_compressed(const std::string& path) { return path.size() > 4 && path.ends_with(".zst"); }

}  // namespace

ExportSummary export_jsonl_file(const Database& db, const std::string& path, const RecordFilter& filter) {
  if (is_compressed(path)) {
    std::ostringstream text;
    ExportSummary summary = export_jsonl(db, text, filter);
    std::vector<std::string> lines;
    std::istringstream in(text.str());
    for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
    support::write_compressed_jsonl(path, lines, 19);  // written aside and renamed there too
    return summary;
  }
  ExportSummary summary;
  write_file(path, [&](std::ostream& out) { summary = export_jsonl(db, out, filter); });
  return summary;
}

ImportSummary import_jsonl(Database& db, std::istream& in, const std::string& source) {
  ImportSummary summary;
  std::unordered_set<WorkloadHash> known;  // defined by the file or already stored
  std::vector<Record> batch;
  auto flush = [&] {
    CommitSummary committed = db.commit(batch);
    summary.records_inserted += committed.inserted;
    summary.duplicates += committed.duplicates;
    batch.clear();
  };

  std::string line;
  int64_t number = 0;
  bool header_seen = false;
  while (std::getline(in, line)) {
    ++number;
    const LineContext at{source, number};
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json object;
    try {
      object = json::parse(line);
    } catch (const json::parse_error& e) {
      at.fail(fmt::format("not JSON: {}", e.what()));
    }
    if (!object.is_object()) at.fail("each line must be a JSON object");
    if (!header_seen) {
      if (!object.contains("format") || object["format"] != kFormatName) {
        at.fail(fmt::format("not a Little Dragon tuning-records file: the first line must be {}", jsonl_header_line()));
      }
      at.only_fields(object, {"format", "version"});
      const json& version = at.field(object, "version");
      if (!version.is_number_integer() || version.get<int64_t>() < 1 || version.get<int64_t>() > kFormatVersion) {
        at.fail(fmt::format("format version {} is not one this build reads ({})", version.dump(), kFormatVersion));
      }
      header_seen = true;
      continue;
    }
    const std::string kind = at.text(object, "kind");
    if (kind == "workload") {
      Workload w = parse_workload(object, at);
      const bool stored = db.find_workload(w.hash).has_value();
      at.guard([&] { db.add_workload(w); });
      if (!stored) ++summary.workloads_added;
      known.insert(w.hash);
    } else if (kind == "record") {
      Record r = parse_record(object, at);
      if (!known.count(r.key.workload)) {
        if (!db.find_workload(r.key.workload)) {
          at.fail(fmt::format("workload {} is neither defined by an earlier line nor stored in {}",
                              format_workload_hash(r.key.workload), db.path()));
        }
        known.insert(r.key.workload);
      }
      validate_record(r, fmt::format("{}:{}", source, number));
      batch.push_back(std::move(r));
      if (batch.size() >= detail::kImportBatch) flush();
    } else {
      at.fail(fmt::format("unknown kind '{}' (expected workload or record)", kind));
    }
  }
  if (!header_seen) throw UserError(fmt::format("{}: empty: not a Little Dragon tuning-records file", source));
  flush();
  return summary;
}

ImportSummary import_jsonl_file(Database& db, const std::string& path) {
  if (is_compressed(path)) {
    std::string text;
    for (const std::string& line : support::read_compressed_jsonl(path)) text += line + '\n';
    std::istringstream in(text);
    return import_jsonl(db, in, path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  return import_jsonl(db, in, path);
}

}  // namespace dragon::db
