// import_metaschedule (metaschedule_import.h): reads TVM's two JSON-lines files, turns each
// record's trace into a compact script through the TVM trace import and replay, and
// commits the records in batches.
#include "dragon/db/metaschedule_import.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/schedule/schedule.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "import_batch.h"

namespace dragon::db {
namespace {

using nlohmann::json;

constexpr std::string_view kWorkloadFile = "database_workload.json";
constexpr std::string_view kRecordFile = "database_tuning_record.json";
// TVM's run time for a failed measurement (MAX_FAIL_COST in seconds).
constexpr double kTvmFailedRunSeconds = 1e10;

// Calls `visit(line_number, json)` for each non-blank line of `path`.
template <typename Visit>
void for_each_json_line(const std::string& path, Visit&& visit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json value;
    try {
      value = json::parse(line);
    } catch (const json::parse_error& e) {
      throw UserError(fmt::format("{}:{}: not JSON: {}", path, number, e.what()));
    }
    visit(number, value);
  }
}

// Our target for TVM's exported target map; nullopt with `why` set when there is none.
std::optional<Target> target_of(const json& tvm_target, std::string* why) {
  if (!tvm_target.is_object() || !tvm_target.contains("kind") || !tvm_target["kind"].is_string()) {
    *why = "the record's target is not a TVM target map with a \"kind\"";
    return std::nullopt;
  }
  const std::string kind = tvm_target["kind"].get<std::string>();
  auto text = [&](std::string_view key) -> std::optional<std::string> {
    auto it = tvm_target.find(key);
    if (it == tvm_target.end() || !it->is_string() || it->get<std::string>().empty()) return std::nullopt;
    return it->get<std::string>();
  };
  if (kind == "cuda") {
    if (std::optional<std::string> arch = text("arch")) return Target{"cuda", *arch};
    *why = "the record's cuda target has no \"arch\" (give the target explicitly)";
    return std::nullopt;
  }
  if (kind == "llvm") return Target{"cpu", text("mcpu").value_or("x86-64")};
  *why = fmt::format("TVM target kind '{}' has no Little Dragon target", kind);
  return std::nullopt;
}

// The record's status, error and samples from TVM's run_secs.
void read_run_secs(const json& run_secs, Record& record, const std::string& where) {
  if (run_secs.is_null()) {
    record.status = RecordStatus::kRunFailed;
    record.error = "MetaSchedule recorded no run time (run_secs is null); it does not record why";
    return;
  }
  if (!run_secs.is_array()) throw UserError(fmt::format("{}: run_secs must be a list of numbers or null", where));
  for (const json& seconds : run_secs) {
    if (!seconds.is_number()) throw UserError(fmt::format("{}: run_secs must be a list of numbers or null", where));
    const double value = seconds.get<double>();
    if (!std::isfinite(value) || value <= 0 || value >= kTvmFailedRunSeconds) {
      record.status = RecordStatus::kRunFailed;
      record.error = fmt::format("MetaSchedule measurement failed (run_secs holds {:g}); it does not record why", value);
      record.samples_ms.clear();
      return;
    }
    record.samples_ms.push_back(static_cast<float>(value * 1e3));
  }
  if (record.samples_ms.empty()) {
    record.status = RecordStatus::kRunFailed;
    record.error = "MetaSchedule recorded no run time (run_secs is empty); it does not record why";
    return;
  }
  record.status = RecordStatus::kOk;
}

struct TvmWorkload {
  std::string tvm_hash;
  std::optional<Workload> ours;
  ir::PrimFunc func;  // ours, parsed once for replay
  int64_t skipped = 0;
};

}  // namespace

ImportSummary import_metaschedule(Database& db, const std::string& directory,
                                  const MetaScheduleImportOptions& options) {
  if (options.hardware.device.empty()) {
    throw UserError("a MetaSchedule import needs the device its records were measured on (MetaSchedule does not "
                    "record it)");
  }
  const std::string workload_path = (std::filesystem::path(directory) / kWorkloadFile).string();
  const std::string record_path = (std::filesystem::path(directory) / kRecordFile).string();
  ImportSummary summary;

  // Workloads: line i (among non-blank lines) is TVM workload i: [shash, base64 module].
  std::vector<TvmWorkload> workloads;
  for_each_json_line(workload_path, [&](int64_t line, const json& value) {
    if (!value.is_array() || value.size() != 2 || !value[0].is_string() || !value[1].is_string()) {
      throw UserError(fmt::format("{}:{}: expected [\"structural hash\", \"base64 module\"]", workload_path, line));
    }
    TvmWorkload w;
    w.tvm_hash = value[0].get<std::string>();
    if (auto it = options.workloads.find(w.tvm_hash); it != options.workloads.end()) {
      w.ours = it->second;
    } else {
      w.ours = options.default_workload;
    }
    if (w.ours) {
      const bool stored = db.find_workload(w.ours->hash).has_value();
      db.add_workload(*w.ours);
      if (!stored) ++summary.workloads_added;
      w.func = w.ours->function();
    }
    workloads.push_back(std::move(w));
  });

  std::vector<Record> batch;
  auto flush = [&] {
    CommitSummary committed = db.commit(batch);
    summary.records_inserted += committed.inserted;
    summary.duplicates += committed.duplicates;
    batch.clear();
  };
  for_each_json_line(record_path, [&](int64_t line, const json& value) {
    const std::string where = fmt::format("{}:{}", record_path, line);
    if (!value.is_array() || value.size() != 2 || !value[0].is_number_integer() || !value[1].is_array() ||
        value[1].size() != 4) {
      throw UserError(fmt::format("{}: expected [workload index, [trace, run_secs, target, args_info]]", where));
    }
    const int64_t index = value[0].get<int64_t>();
    if (index < 0 || index >= static_cast<int64_t>(workloads.size())) {
      throw UserError(fmt::format("{}: workload index {} is not a line of {} ({} workloads)", where, index,
                                  workload_path, workloads.size()));
    }
    TvmWorkload& workload = workloads[index];
    if (!workload.ours) {
      ++workload.skipped;
      return;
    }
    const json& fields = value[1];
    Record record;
    record.key.workload = workload.ours->hash;
    record.key.hardware = options.hardware;
    record.origin = options.origin;
    if (options.target) {
      record.key.target = *options.target;
    } else if (fields[2].is_null()) {
      throw UserError(fmt::format("{}: the record has no target: give the target explicitly", where));
    } else {
      std::string why;
      std::optional<Target> target = target_of(fields[2], &why);
      if (!target) {
        summary.skipped.push_back(fmt::format("{}: {}", where, why));
        return;
      }
      record.key.target = *target;
    }
    read_run_secs(fields[1], record, where);

    // TVM JSON trace -> our Trace -> replayed on our workload -> the compact script of
    // what actually ran (perfect tiles repaired as replay repairs them).
    try {
      schedule::Trace trace = schedule::trace_from_json(fields[0].dump());
      schedule::Schedule sch(workload.func);
      trace.apply_to(sch);
      record.script = script::encode(sch.trace());
    } catch (const schedule::ScheduleError& e) {
      summary.skipped.push_back(fmt::format("{}: the trace does not replay on workload {}: {}", where,
                                            format_workload_hash(workload.ours->hash), e.what()));
      return;
    } catch (const UserError& e) {
      summary.skipped.push_back(fmt::format("{}: the trace does not convert: {}", where, e.what()));
      return;
    }
    batch.push_back(std::move(record));
    if (batch.size() >= detail::kImportBatch) flush();
  });
  flush();
  for (size_t i = 0; i < workloads.size(); ++i) {
    if (workloads[i].skipped > 0) {
      summary.skipped.push_back(fmt::format("{}: TVM workload {} (structural hash {}): no workload given for it, {} "
                                            "records skipped",
                                            workload_path, i, workloads[i].tvm_hash, workloads[i].skipped));
    }
  }
  return summary;
}

}  // namespace dragon::db
