// Measured candidates as JSON Lines, the cost model's training and evaluation data until
// the tuning database (src/db) serves records: one object per line,
//   {"workload": "matmul:m=128,n=128,k=128", "target": "cpu", "script": "<compact script>",
//    "latency_s": 0.00123, "error": ""}
// with latency_s null and error set for a failed candidate. The script replays on the
// workload's unscheduled function (ops/ spec) to the measured program.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "dragon/lower/target.h"
#include "dragon/search/cost_model.h"

namespace dragon::search {

struct MeasuredRecord {
  std::string workload;  // an op spec
  std::string target;    // "cpu" or "cuda" (lower::Target::to_string() is accepted too)
  std::string script;    // compact script (script/script.h)
  std::optional<double> latency_s;
  std::string error;     // why it failed; empty when measured
};

// Reads a JSONL file; a line that is not a record is a UserError naming the file and line.
std::vector<MeasuredRecord> read_measured_records(const std::filesystem::path& path);
// Writes one record as one line.
void write_measured_record(std::ostream& out, const MeasuredRecord& record);
// "cpu" -> Target::cpu(), "cuda..." -> Target::cuda_h200(); else a UserError.
lower::Target parse_record_target(const std::string& target);

// Replays every record's script on its workload and extracts its rows, on `threads`
// threads (0: all cores). The group key is the canonical spec and the target.
std::vector<FeaturizedCandidate> featurize_records(const std::vector<MeasuredRecord>& records, int threads = 0);

}  // namespace dragon::search
