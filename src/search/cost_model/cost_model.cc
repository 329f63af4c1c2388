// What every cost model shares: feature extraction of candidates (on threads) and the
// update/predict overloads that take candidates instead of rows.
#include "dragon/search/cost_model.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "dragon/support/error.h"

namespace dragon::search {
namespace {

FeaturizedCandidate featurize_one(const Candidate& c) {
  FeaturizedCandidate f;
  f.workload = c.workload;
  f.target = c.target.to_string();
  try {
    f.features = extract_program_features(c.scheduled, c.target);
  } catch (const UserError&) {
    // A schedule the pipeline refuses: no rows, scored 0 (cost_model.h).
  }
  return f;
}

}  // namespace

std::vector<FeaturizedCandidate> featurize(const std::vector<Candidate>& candidates, int threads) {
  std::vector<FeaturizedCandidate> out(candidates.size());
  int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n = std::min<int>(n, static_cast<int>(candidates.size()));
  if (n <= 1) {
    for (size_t i = 0; i < candidates.size(); ++i) out[i] = featurize_one(candidates[i]);
    return out;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < candidates.size(); i = next++) {
        try {
          out[i] = featurize_one(candidates[i]);
        } catch (...) {
          std::lock_guard lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

FeaturizedCandidate featurize(const MeasuredCandidate& measured) {
  FeaturizedCandidate f = featurize_one(measured.candidate);
  f.latency_s = measured.latency_s;
  return f;
}

void CostModel::update(const std::vector<MeasuredCandidate>& measured) {
  std::vector<Candidate> candidates;
  candidates.reserve(measured.size());
  for (const MeasuredCandidate& m : measured) candidates.push_back(m.candidate);
  std::vector<FeaturizedCandidate> rows = featurize(candidates);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].latency_s = measured[i].latency_s;
  update(rows);
}

std::vector<double> CostModel::predict(const std::vector<Candidate>& candidates) {
  return predict(featurize(candidates));
}

}  // namespace dragon::search
