// Mining one workload's tuning records for training examples (docs/data-set.md, "Mining
// rules"): a pure function of the records under one (workload, target, hardware) key,
// deterministic, inventing nothing (every latency is a record's). Not the tuning that
// makes the records (dataset_builder.h) and not the file format (example.h).
//
// Rules:
// 1) Only kOk records with samples count. A script measured more than once counts once,
//    with its fastest record (ties: the earlier record), as the database's top_k ranks.
// 2) The best is the fastest of those (ties: the earlier record). When the best is the
//    default schedule (script ""), the workload gives no example: there is no script to
//    teach. When nothing is kOk, none either.
// 3) Construction: the workload -> the best script, with the default schedule's latency as
//    the prompt's when the default was measured and verified.
// 4) Refinement: another script -> the best script, when prompt median / best median lies
//    in [min_ratio, max_ratio] and the difference is significant: the prompt's 95% interval
//    lies wholly above the best's (prompt.ci95.low > best.ci95.high). Records without an
//    interval (under 6 samples) never qualify, as prompts or as targets. The default
//    schedule is never a refinement prompt (the construction example covers it).
// 5) At most refinements_per_workload of the qualifying prompts are kept, spread over the
//    ratio range: the one nearest (in log ratio) to each of that many points spaced evenly
//    in log between min_ratio and max_ratio, each prompt used once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "dragon/data/corpus.h"
#include "dragon/data/example.h"
#include "dragon/db/record.h"

namespace dragon::data {

struct MiningOptions {
  double min_ratio = 1.2;            // refinement prompts at least this much slower than the best
  double max_ratio = 4.0;            // and at most this much
  int refinements_per_workload = 2;  // kept per workload, spread over [min_ratio, max_ratio]
};
// Throws UserError for 1 <= min_ratio <= max_ratio violated or a negative count.
void validate(const MiningOptions& options);

// Why a workload gave the examples it gave.
enum class MiningOutcome : uint8_t {
  kExamples,     // a construction example (and perhaps refinements)
  kDefaultBest,  // the default schedule was the fastest: nothing to teach
  kNoOkRecord,   // nothing verified and timed (not tuned yet, or every candidate failed)
};

struct MinedWorkload {
  MiningOutcome outcome = MiningOutcome::kNoOkRecord;
  std::optional<Example> construction;
  std::vector<Example> refinements;  // by ratio, slowest prompt last
  int64_t ok_scripts = 0;            // distinct scripts with a kOk record (the default included)
  int64_t in_ratio_range = 0;        // refinement prompts whose ratio lies in the range
  int64_t significant = 0;           // of those, significantly slower; min(this, cap) are kept
};

// Mines `records`, all under one key of `entry`'s workload (records of another workload
// are an internal error), in any order.
MinedWorkload mine_workload(const CorpusEntry& entry, std::span<const db::StoredRecord> records,
                            const MiningOptions& options);

}  // namespace dragon::data
