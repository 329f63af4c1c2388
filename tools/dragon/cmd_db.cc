// dragon db stats|curve|export|import: look into a tuning database, follow its searches'
// progress, write it as JSON lines, and read JSON lines or a MetaSchedule JSONDatabase into
// it (docs/db.md). Argument parsing
// and printing only; the work is src/db's.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/db/database.h"
#include "dragon/db/jsonl.h"
#include "dragon/db/metaschedule_import.h"
#include "dragon/db/tuning_curve.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::cli {
namespace {

db::Workload workload_of_spec(const std::string& spec) {
  ops::Workload w = ops::OpRegistry::global().make_workload(spec);
  return db::Workload::of(w.func, w.spec);
}

// "cuda:sm_90a" -> {"cuda", "sm_90a"}.
db::Target parse_target(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw UserError(fmt::format("bad --target '{}': expected NAME:ARCH, e.g. cuda:sm_90a or cpu:x86-64", text));
  }
  return db::Target{text.substr(0, colon), text.substr(colon + 1)};
}

void print_stats(const db::Database& database, bool check) {
  const db::DatabaseStats stats = database.stats();
  std::printf("%s: schema %d, %lld workloads, %lld records\n", database.path().c_str(), stats.schema_version,
              static_cast<long long>(stats.workloads), static_cast<long long>(stats.records));
  std::string statuses, origins;
  for (const auto& [status, count] : stats.by_status) {
    statuses += fmt::format("{}{} {}", statuses.empty() ? "" : ", ", db::record_status_id(status), count);
  }
  for (const auto& [origin, count] : stats.by_origin) {
    origins += fmt::format("{}{} {}", origins.empty() ? "" : ", ", origin, count);
  }
  if (!statuses.empty()) std::printf("  by status: %s\n", statuses.c_str());
  if (!origins.empty()) std::printf("  by origin: %s\n", origins.c_str());
  for (const db::DatabaseStats::KeyCount& key : stats.by_target_hardware) {
    std::printf("  %s on %s: %lld workloads, %lld records, %lld ok\n", key.target.describe().c_str(),
                key.hardware.describe().c_str(), static_cast<long long>(key.workloads),
                static_cast<long long>(key.records), static_cast<long long>(key.ok));
  }
  if (check) {
    const std::vector<std::string> problems = database.integrity_problems();
    if (problems.empty()) {
      std::printf("  integrity: ok\n");
    } else {
      for (const std::string& problem : problems) std::printf("  integrity: %s\n", problem.c_str());
      throw UserError(fmt::format("{} failed its integrity check ({} problems)", database.path(), problems.size()));
    }
  }
}

struct CurveRequest {
  std::string file;
  std::vector<std::string> specs;  // none: every key
  std::string device;              // "": any
  int64_t at = 64;
  std::optional<int64_t> of;       // none: every trial
  std::string json;                // "": no JSON file
};

// Per tuning key: its trials, the best after `at` and after `of` trials and their ratio (issue
// 17's search efficiency: within 5% of the 1,000-trial best after 64 trials on the median
// problem), then the median ratio over the keys that reached `of` trials.
void print_curves(const CurveRequest& request) {
  if (request.at < 1) throw UserError(fmt::format("--at {}: give at least 1 trial", request.at));
  if (request.of && *request.of < request.at) {
    throw UserError(fmt::format("--of {} is below --at {}", *request.of, request.at));
  }
  db::Database database = db::Database::open(request.file, db::OpenOptions{.read_only = true});
  std::vector<db::WorkloadHash> wanted;
  for (const std::string& spec : request.specs) {
    const db::Workload w = workload_of_spec(spec);
    if (!database.find_workload(w.hash)) {
      throw UserError(fmt::format("--spec '{}': {} has no such workload", spec, request.file));
    }
    wanted.push_back(w.hash);
  }
  nlohmann::json curves = nlohmann::json::array();
  std::vector<double> ratios;
  // The workload last: specs run long (a table-batched embedding's names 26 tables).
  std::printf("%7s %12s %12s %8s  %-24s %s\n", "trials", fmt::format("best@{}", request.at).c_str(),
              request.of ? fmt::format("best@{}", *request.of).c_str() : "best", "ratio", "hardware", "workload");
  for (const db::TuningKey& key : database.keys()) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), key.workload) == wanted.end()) continue;
    if (!request.device.empty() && key.hardware.device != request.device) continue;
    const db::TuningCurve curve = db::tuning_curve(database, key);
    if (curve.trials == 0) continue;
    const std::optional<db::Workload> workload = database.find_workload(key.workload);
    const std::string name = workload && workload->spec ? *workload->spec : fmt::format("{:016x}", key.workload);
    const int64_t of = request.of.value_or(curve.trials);
    const std::optional<double> at_ms = curve.best_ms_within(request.at);
    const std::optional<double> of_ms = curve.best_ms_within(of);
    const bool complete = curve.trials >= of;
    std::string ratio = "-";
    if (at_ms && of_ms && complete) {
      ratios.push_back(*at_ms / *of_ms);
      ratio = fmt::format("{:.3f}x", ratios.back());
    } else if (!complete) {
      ratio = "short";  // fewer trials than --of
    }
    auto ms = [](std::optional<double> v) { return v ? fmt::format("{:.4g} ms", *v) : std::string("-"); };
    std::printf("%7lld %12s %12s %8s  %-24s %s\n", static_cast<long long>(curve.trials), ms(at_ms).c_str(),
                ms(of_ms).c_str(), ratio.c_str(), key.hardware.device.c_str(), name.c_str());
    nlohmann::json points = nlohmann::json::array();
    for (const db::TuningCurve::Point& p : curve.points) points.push_back({p.trial, p.best_ms});
    curves.push_back({{"workload", name}, {"target", key.target.describe()}, {"hardware", key.hardware.describe()},
                      {"trials", curve.trials}, {"curve", points}});
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    const double median = n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
    std::printf("median over %zu workloads: the best after %lld trials is %.3fx the best after %s\n", n,
                static_cast<long long>(request.at), median,
                request.of ? fmt::format("{} trials", *request.of).c_str() : "all trials");
  }
  if (!request.json.empty()) {
    std::ofstream out(request.json);
    out << nlohmann::json{{"at", request.at}, {"tasks", curves}}.dump(1) << "\n";
    if (!out) throw UserError(fmt::format("--json: could not write {}", request.json));
  }
}

void print_import(const db::ImportSummary& summary, const std::string& from, const std::string& into) {
  for (const std::string& skipped : summary.skipped) std::fprintf(stderr, "skipped: %s\n", skipped.c_str());
  std::printf("%s -> %s: %lld workloads added, %lld records added, %lld already there, %zu skipped\n", from.c_str(),
              into.c_str(), static_cast<long long>(summary.workloads_added),
              static_cast<long long>(summary.records_inserted), static_cast<long long>(summary.duplicates),
              summary.skipped.size());
}

}  // namespace

Command add_db_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("db", "Inspect, export and import tuning databases");
  sub->require_subcommand(1);

  auto stats_file = std::make_shared<std::string>();
  auto check = std::make_shared<bool>(false);
  CLI::App* stats = sub->add_subcommand("stats", "Count workloads and records by status, origin, target and hardware");
  stats->add_option("file", *stats_file, "The tuning database")->required();
  stats->add_flag("--check", *check, "Also run SQLite's integrity check over the whole file");

  auto curve_request = std::make_shared<CurveRequest>();
  CLI::App* curve = sub->add_subcommand(
      "curve", "Per workload the best verified latency against trials (distinct scripts in commit order): the best "
               "after --at trials beside the best after --of (or all)");
  curve->add_option("file", curve_request->file, "The tuning database")->required();
  curve->add_option("--spec", curve_request->specs, "Only this op spec's workload (repeatable)");
  curve->add_option("--device", curve_request->device,
                    "Only records measured on this device (as `dragon db stats` names it)");
  curve->add_option("--at", curve_request->at, "The early trial budget (default 64)");
  curve->add_option("--of", curve_request->of, "The full budget (default: every trial recorded)");
  curve->add_option("--json", curve_request->json, "Also write every curve's points ([trial, best ms]) here");

  auto export_file = std::make_shared<std::string>();
  auto export_out = std::make_shared<std::string>();
  auto export_origin = std::make_shared<std::string>();
  auto export_spec = std::make_shared<std::string>();
  auto export_device = std::make_shared<std::string>();
  CLI::App* export_cmd = sub->add_subcommand("export", "Write the database as JSON lines (lossless)");
  export_cmd->add_option("file", *export_file, "The tuning database")->required();
  export_cmd->add_option("-o,--output", *export_out, "The JSON-lines file to write")->required();
  export_cmd->add_option("--origin", *export_origin, "Only records of this origin (search, model, expert, ...)");
  export_cmd->add_option("--spec", *export_spec, "Only records of this op spec's workload");
  export_cmd->add_option("--device", *export_device,
                         "Only records measured on this device, any driver (as `dragon db stats` names it, e.g. "
                         "\"NVIDIA H100 80GB HBM3\")");

  auto import_file = std::make_shared<std::string>();
  auto import_in = std::make_shared<std::string>();
  auto metaschedule = std::make_shared<std::string>();
  auto workloads = std::make_shared<std::vector<std::string>>();
  auto device = std::make_shared<std::string>();
  auto driver = std::make_shared<std::string>();
  auto target = std::make_shared<std::string>();
  auto origin = std::make_shared<std::string>("import");
  CLI::App* import_cmd = sub->add_subcommand(
      "import", "Add JSON lines (from dragon db export) or a MetaSchedule JSONDatabase directory to the database "
                "(creating it); importing the same records again adds nothing");
  import_cmd->add_option("file", *import_file, "The tuning database")->required();
  CLI::Option* jsonl_option = import_cmd->add_option("jsonl", *import_in, "A JSON-lines file written by dragon db export");
  CLI::Option* ms_option = import_cmd->add_option(
      "--metaschedule", *metaschedule, "A MetaSchedule work directory (database_workload.json, database_tuning_record.json)");
  jsonl_option->excludes(ms_option);
  import_cmd->add_option("--workload", *workloads,
                         "MetaSchedule: our workload for TVM's, as TVMHASH=SPEC (TVM's decimal structural hash), or "
                         "SPEC alone for every TVM workload not named")
      ->needs(ms_option);
  import_cmd->add_option("--device", *device, "MetaSchedule: the GPU or CPU the records were measured on")
      ->needs(ms_option);
  import_cmd->add_option("--driver", *driver, "MetaSchedule: its driver version")->needs(ms_option);
  import_cmd->add_option("--target", *target,
                         "MetaSchedule: file every record under NAME:ARCH (default: each record's TVM target)")
      ->needs(ms_option);
  import_cmd->add_option("--origin", *origin, "MetaSchedule: the records' origin")->needs(ms_option);

  return [=] {
    if (stats->parsed()) {
      print_stats(db::Database::open(*stats_file, db::OpenOptions{.read_only = true}), *check);
    } else if (curve->parsed()) {
      print_curves(*curve_request);
    } else if (export_cmd->parsed()) {
      db::Database database = db::Database::open(*export_file, db::OpenOptions{.read_only = true});
      db::RecordFilter filter;
      if (!export_origin->empty()) filter.origin = *export_origin;
      if (!export_spec->empty()) filter.workload = workload_of_spec(*export_spec).hash;
      if (!export_device->empty()) filter.device = *export_device;
      const db::ExportSummary summary = db::export_jsonl_file(database, *export_out, filter);
      std::printf("%s -> %s: %lld workloads, %lld records\n", export_file->c_str(), export_out->c_str(),
                  static_cast<long long>(summary.workloads), static_cast<long long>(summary.records));
    } else if (import_cmd->parsed()) {
      if (import_in->empty() == metaschedule->empty()) {
        throw UserError("give either a JSON-lines file or --metaschedule DIR to import");
      }
      db::Database database = db::Database::open(*import_file);
      if (!import_in->empty()) {
        print_import(db::import_jsonl_file(database, *import_in), *import_in, *import_file);
        return 0;
      }
      db::MetaScheduleImportOptions options;
      for (const std::string& entry : *workloads) {
        // TVM's hash is decimal digits; an op spec starts with a letter.
        const size_t equals = entry.find('=');
        const bool named = equals != std::string::npos && equals > 0 &&
                           std::all_of(entry.begin(), entry.begin() + equals, [](char c) { return std::isdigit(c); });
        if (named) {
          options.workloads[entry.substr(0, equals)] = workload_of_spec(entry.substr(equals + 1));
        } else if (options.default_workload) {
          throw UserError(fmt::format("--workload: two specs without a TVM hash ('{}' and '{}')",
                                      *options.default_workload->spec, entry));
        } else {
          options.default_workload = workload_of_spec(entry);
        }
      }
      if (options.workloads.empty() && !options.default_workload) {
        throw UserError("--metaschedule needs --workload SPEC (or TVMHASH=SPEC): MetaSchedule's workloads are TVM "
                        "modules, which dragon does not read");
      }
      if (device->empty()) throw UserError("--metaschedule needs --device: MetaSchedule does not record it");
      options.hardware = db::Hardware{*device, *driver};
      if (!target->empty()) options.target = parse_target(*target);
      options.origin = *origin;
      print_import(db::import_metaschedule(database, *metaschedule, options), *metaschedule, *import_file);
    }
    return 0;
  };
}

}  // namespace dragon::cli
