// The tuning-database tests' helpers (db_test_util.h).
#include "unit/db/db_test_util.h"

#include <stdlib.h>

#include <filesystem>
#include <set>

#include "dragon/ops/op_registry.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "unit/schedule/random_trace.h"

namespace dragon::db::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "dragon-db-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw InternalError("mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::file(std::string_view name) const { return path_ + "/" + std::string(name); }

Workload workload_of_spec(const std::string& spec) {
  ops::Workload w = ops::OpRegistry::global().make_workload(spec);
  return Workload::of(w.func, w.spec);
}

std::vector<std::string> random_scripts(const Workload& workload, int count, uint64_t seed) {
  const ir::PrimFunc func = workload.function();
  std::vector<std::string> scripts = {""};
  std::set<std::string> seen = {""};
  schedule::testing::RandomTraceOptions options;
  options.steps = 4;
  for (uint64_t attempt = 0; static_cast<int>(scripts.size()) < count && attempt < 1000; ++attempt) {
    schedule::Schedule sch = schedule::testing::random_schedule(func, seed * 1000 + attempt, options);
    std::string script = script::encode(sch.trace());
    if (seen.insert(script).second) scripts.push_back(std::move(script));
  }
  if (static_cast<int>(scripts.size()) < count) throw InternalError("too few distinct random scripts");
  return scripts;
}

Target cuda_sm90a() { return Target{"cuda", "sm_90a"}; }
Target cpu_x86() { return Target{"cpu", "x86-64"}; }
Hardware h200() { return Hardware{"NVIDIA H200", "580.65.06"}; }
Hardware other_gpu() { return Hardware{"NVIDIA A100-SXM4-80GB", "580.65.06"}; }

Record ok_record(const TuningKey& key, std::string script, std::vector<float> samples) {
  Record r;
  r.key = key;
  r.script = std::move(script);
  r.status = RecordStatus::kOk;
  r.samples_ms = std::move(samples);
  r.origin = "search";
  return r;
}

Record failed_record(const TuningKey& key, std::string script, RecordStatus status, std::string error) {
  Record r;
  r.key = key;
  r.script = std::move(script);
  r.status = status;
  r.error = std::move(error);
  r.origin = "search";
  return r;
}

std::vector<float> random_samples(std::mt19937_64& rng, double center_ms) {
  std::uniform_int_distribution<int> count(1, 12);
  std::lognormal_distribution<double> noise(0.0, 0.05);
  std::vector<float> samples(static_cast<size_t>(count(rng)));
  for (float& s : samples) s = static_cast<float>(center_ms * noise(rng));
  return samples;
}

}  // namespace dragon::db::testing
