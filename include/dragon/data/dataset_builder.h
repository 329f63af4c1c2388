// Building one shard of the data set (docs/data-set.md): tune the shard's workloads
// (search::tune, which resumes from the tuning database: trials already there count against
// the budget, so a run cut off loses only the round in flight), then mine every workload's
// records (mining.h) and write the shard, its summary and the rebuilt manifest
// (manifest.h). A shard is always written whole from the database, so rerunning it after a
// time budget or a kill completes it. Not the CLI (tools/dragon/cmd_data_build.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dragon/data/corpus.h"
#include "dragon/data/manifest.h"
#include "dragon/data/mining.h"
#include "dragon/db/database.h"
#include "dragon/search/tuner.h"

namespace dragon::data {

struct BuildProgress {
  int64_t workloads_done = 0;  // trial budget reached (or the search ended) and mined
  int64_t workloads = 0;       // in the shard
  int64_t examples = 0;        // mined from the workloads done
  double candidates_per_second = 0;
  double elapsed_s = 0;
  double propose_s = 0, measure_s = 0;  // of elapsed_s, tuning's proposing and measuring
};

struct BuildOptions {
  int64_t shard_index = 0;
  int64_t shard_count = 1;
  int64_t trials_per_workload = 64;  // measured candidates per workload, earlier runs' included
  int batch_size = 16;
  int tasks_per_round = 16;  // workloads measured together (search::TuneOptions)
  std::optional<double> time_budget_s;  // no tuning round starts after it; what is mined is written
  MiningOptions mining;
  search::EvolutionarySearchOptions search;
  std::string commit;  // recorded with every record and in the shard's summary
  std::function<void(const BuildProgress&)> on_progress;  // after every round and every workload mined
  std::function<void(const std::string&)> log;
};

struct BuildResult {
  ShardSummary shard;
  Manifest manifest;                          // rebuilt with this shard
  std::vector<search::TaskOutcome> outcomes;  // one per workload of the shard, in shard order
  int64_t measured = 0;                       // candidates measured (not from a cache) in this run
  double seconds = 0;
};

// Tunes and mines shard options.shard_index of options.shard_count of `corpus` into `dir`
// (created if missing). The target and hardware the records are filed under are those of
// the environments `factory` makes. Throws UserError for bad options, an empty shard, or
// when no workload could be tuned.
BuildResult build_shard(const Corpus& corpus, db::Database& database, const search::TaskEnvironmentFactory& factory,
                        search::CostModel& model, const std::string& dir, const BuildOptions& options);

// The records' key a mining-only run files its shard under: of the (target, hardware)
// keys `database` holds records for, the one whose target is named `target_name` ("cuda",
// "cpu") and whose device and driver are `device` and `driver` (either, when empty,
// any). Throws UserError naming the keys there are when none or several match.
std::pair<db::Target, db::Hardware> records_key(const db::Database& database, const std::string& target_name,
                                                const std::string& device, const std::string& driver);

// Shard options.shard_index of options.shard_count of `corpus` mined from the records
// `database` holds under (target, hardware): nothing is measured, so no device is needed
// (a shard rebuilt on any machine from committed records). Partial when a workload has
// fewer than options.trials_per_workload trials there. Throws UserError for bad options or
// an empty shard.
BuildResult mine_shard(const Corpus& corpus, const db::Database& database, const db::Target& target,
                       const db::Hardware& hardware, const std::string& dir, const BuildOptions& options);

// The mining half: mines every entry's records under (entry, header.target,
// header.hardware), writes DIR/header.file_name() (its lines in entry order: the
// construction, then the refinements) and its summary, and rebuilds the manifest. `header`
// supplies the shard's identity and provenance; its counts are filled here. Returns the
// summary written.
ShardSummary write_shard(const std::vector<CorpusEntry>& entries, const db::Database& database, ShardSummary header,
                         const std::string& dir);

}  // namespace dragon::data
