// One training example of the search-derived data set (docs/data-set.md): a construction
// (workload -> the best verified script) or a refinement (workload + a measurably slower
// script from the search history -> the best script), with the latencies it was chosen by,
// every one read from a tuning record. Its JSON line is a superset of the SFT trainer's
// line (model/sft_data.h), so the trainer reads shards as they are. Not the mining rules
// (mining.h) and not the shard files (support/compressed_jsonl.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dragon/data/corpus.h"
#include "dragon/db/record.h"
#include "dragon/data/prompt.h"  // prompt_text: every example's prompt (the SFT line's "ir")
#include "dragon/script/tokenizer.h"

namespace dragon::data {

enum class ExampleKind : uint8_t { kConstruction, kRefinement };
// "construction", "refinement": the SFT line's "task".
std::string_view example_kind_id(ExampleKind kind);

// A record's latency as the example stores it: the median of its samples and the
// distribution-free 95% interval of that median (absent under 6 samples).
struct Latency {
  double median_ms = 0;
  std::optional<db::LatencySummary::Interval> ci95;
  int64_t samples = 0;

  // The latency of a kOk record; nullopt when it has no samples.
  static std::optional<Latency> of(const db::Record& record);
  bool operator==(const Latency& other) const;
};

struct Example {
  ExampleKind kind = ExampleKind::kConstruction;
  std::string spec;                            // canonical op spec; the prompt is rebuilt from it
  db::WorkloadHash hash = 0;                   // structural hash of the function the spec builds
  std::string family;                          // the corpus entry's family
  Split split = Split::kTrain;
  std::optional<std::string> existing_script;  // refinement only: the slower script to improve
  std::string script;                          // the target: the best verified script, canonical
  Latency target_latency;                      // the target script's record
  // The prompt's program, measured: the existing script's record (refinement) or the
  // default schedule's (construction, when it was measured and verified).
  std::optional<Latency> prompt_latency;

  // prompt median / target median, when the prompt's latency is known.
  std::optional<double> speedup() const;
  bool operator==(const Example&) const = default;
};

// The example's JSON line (no newline): the SFT fields ("task", "prompt": "ir",
// "workload", "existing_script", "script") then "hash", "split", "family",
// "target_latency", "prompt_latency" and "speedup".
std::string to_json_line(const Example& example);
// Parses one line; throws UserError "ORIGIN:LINE: why" for malformed JSON, a missing or
// mistyped field, an unknown task or split, a refinement without its existing script (or a
// construction with one), a latency that is not positive and finite, an interval that does
// not contain its median, and a speedup that is not prompt median / target median. Scripts
// and hashes are checked against the compiler by dataset_check.h, not here.
Example parse_example_line(std::string_view line, std::string_view origin, int line_number);

// The tokenizer's example of `example` given its prompt text (prompt_text(example.spec)):
// the same script::Example model::to_example makes of the SFT line, so its
// encode_example is the token sequence the trainer sees.
script::Example tokenizer_example(const Example& example, std::string prompt);

}  // namespace dragon::data
