// Helpers of the tuning-database tests: a temporary directory, real workloads and
// canonical scripts made by random schedules, and records built from them. No GoogleTest
// dependency, so forked child processes can use it too.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/db/record.h"

namespace dragon::db::testing {

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // path()/name.
  std::string file(std::string_view name) const;

 private:
  std::string path_;
};

// The workload of an op spec from the op library (spec kept).
Workload workload_of_spec(const std::string& spec);

// `count` distinct canonical scripts of random schedules of `workload` (the first is the
// empty script, the default schedule); deterministic for a seed.
std::vector<std::string> random_scripts(const Workload& workload, int count, uint64_t seed);

Target cuda_sm90a();
Target cpu_x86();
Hardware h200();
Hardware other_gpu();

// An ok record of `script` under `key` with `samples`, origin "search".
Record ok_record(const TuningKey& key, std::string script, std::vector<float> samples);
// A failed record (no samples) with `status` and an error message.
Record failed_record(const TuningKey& key, std::string script, RecordStatus status, std::string error);

// Random positive samples around `center_ms` (1 to 12 of them).
std::vector<float> random_samples(std::mt19937_64& rng, double center_ms);

}  // namespace dragon::db::testing
