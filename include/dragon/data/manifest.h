// The data set's directory (docs/data-set.md, "Files"): shards DIR/shard-K-of-N.jsonl.zst,
// each with its summary DIR/shard-K-of-N.summary.json (counts by kind and split, token
// statistics, what mining found, whether the run was cut short), and DIR/manifest.json, the
// summaries of every shard present with their totals. The manifest is always rebuilt from
// the summaries present, so runs of different shards (on different machines, at different
// times) combine by putting their files in one directory. Not the examples (example.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/data/corpus.h"
#include "dragon/data/mining.h"
#include "dragon/db/record.h"

namespace dragon::data {

// Format of manifest.json and the summaries; a reader refuses another.
inline constexpr std::string_view kDataSetFormat = "dragon-data-set-v1";

struct KindCounts {
  int64_t construction = 0;
  int64_t refinement = 0;
  int64_t total() const { return construction + refinement; }
  bool operator==(const KindCounts&) const = default;
};

// Token counts of examples under the model's tokenizer (whole sequences: frame markers,
// prompt, existing script, target script).
struct TokenStatistics {
  int64_t examples = 0;
  int64_t total = 0;
  int64_t max = 0;
  void add(int64_t tokens);
  double mean() const { return examples > 0 ? static_cast<double>(total) / static_cast<double>(examples) : 0; }
  bool operator==(const TokenStatistics&) const = default;
};

struct ShardSummary {
  int64_t index = 0;
  int64_t count = 1;
  // The run stopped on its time budget before every workload had its trials: the shard
  // holds what was mined so far, and the next run with the same --shard completes it.
  bool partial = false;
  std::string corpus;
  db::Target target;
  db::Hardware hardware;
  std::string commit;    // Little Dragon's commit that mined it
  std::string built_at;  // UTC, db::format_time
  int64_t trials_per_workload = 0;
  std::string tokenizer;  // the tokenizer's version the token statistics are under
  MiningOptions mining;

  int64_t workloads = 0;       // corpus entries in this shard
  int64_t tuned = 0;           // of them, with records under the key
  int64_t with_examples = 0;   // gave a construction example (and perhaps refinements)
  int64_t default_best = 0;    // the default schedule was the fastest: no example
  int64_t no_ok_record = 0;    // nothing verified and timed
  int64_t refinements_in_range = 0;     // prompts within the ratio range
  int64_t refinements_significant = 0;  // of those, significantly slower (before the per-workload cap)
  std::map<Split, KindCounts> examples;  // by split
  TokenStatistics tokens;

  int64_t example_count() const;
  KindCounts by_kind() const;  // over every split
  std::string file_name() const;  // "shard-K-of-N.jsonl.zst"
};

struct Manifest {
  std::string corpus;
  db::Target target;
  db::Hardware hardware;
  int64_t shard_count = 0;
  std::vector<ShardSummary> shards;  // the shards present, by index

  // The shards' counts added up (index, count, partial and provenance fields unset).
  ShardSummary totals() const;
};

std::string shard_file_name(int64_t index, int64_t count);     // "shard-K-of-N.jsonl.zst"
std::string summary_file_name(int64_t index, int64_t count);   // "shard-K-of-N.summary.json"

// Writes DIR/summary_file_name(...) atomically.
void write_shard_summary(const std::string& dir, const ShardSummary& summary);
// Reads every DIR/shard-*.summary.json and writes DIR/manifest.json (atomically) with
// them. Throws UserError when a summary is malformed ("FILE: why") or the summaries
// disagree on corpus, target, hardware or shard count (a directory holds one data set).
Manifest rebuild_manifest(const std::string& dir);
// Reads DIR/manifest.json; UserError "DIR/manifest.json: why" when missing or malformed.
Manifest read_manifest(const std::string& dir);

// What `dragon data stats` prints: the data set, each shard's line, the totals.
std::string describe(const Manifest& manifest);

}  // namespace dragon::data
