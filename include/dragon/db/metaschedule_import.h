// Import of a TVM MetaSchedule JSONDatabase directory (database_workload.json and
// database_tuning_record.json, REFERENCE-metaschedule.md section 3): each record's TVM
// JSON trace goes through schedule::trace_from_json to our Trace and script::encode to a
// compact script, is replayed on our workload to check that it applies, and is stored
// with its run times. Not the JSON-lines format (jsonl.h).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "dragon/db/database.h"
#include "dragon/db/jsonl.h"
#include "dragon/db/record.h"

namespace dragon::db {

struct MetaScheduleImportOptions {
  // MetaSchedule stores its workloads as TVM IRModules, which we do not read: the caller
  // says which of our workloads each one is, by TVM's structural hash as written in
  // database_workload.json (a decimal string).
  std::map<std::string, Workload> workloads;
  // The workload of every TVM workload not in `workloads` (a directory tuned for one op).
  std::optional<Workload> default_workload;
  // MetaSchedule does not record the device it measured on: the caller must say.
  Hardware hardware;
  // The target of every record; when absent, each record's target JSON is read
  // ({"kind": "cuda", "arch": "sm_90a"} -> cuda sm_90a, {"kind": "llvm"} -> cpu with its
  // "mcpu" or x86-64), and a record without one is an error.
  std::optional<Target> target;
  std::string origin = "import";
};

// Imports `directory`. Records of a TVM workload with no workload given, and traces that
// do not convert or do not replay on the workload, are skipped with the reason; run_secs
// absent or holding TVM's 1e10 failure value become kRunFailed records. A missing or
// malformed file throws UserError "FILE:LINE: why". Idempotent, like import_jsonl.
ImportSummary import_metaschedule(Database& db, const std::string& directory,
                                  const MetaScheduleImportOptions& options);

}  // namespace dragon::db
