// dragon db stats|export|import: look into a tuning database, write it as JSON lines, and
// read JSON lines or a MetaSchedule JSONDatabase into it (docs/db.md). Argument parsing
// and printing only; the work is src/db's.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "dragon/db/database.h"
#include "dragon/db/jsonl.h"
#include "dragon/db/metaschedule_import.h"
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
