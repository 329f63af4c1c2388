// Ranking metrics and the held-out evaluation of a cost model (cost_model_eval.h).
#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <random>

#include "dragon/search/cost_model_eval.h"
#include "dragon/support/error.h"

namespace dragon::search {
namespace {

// Indices by descending score, ties by position.
std::vector<size_t> by_score(const std::vector<double>& scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

}  // namespace

std::vector<double> workload_labels(const std::vector<std::string>& groups, const std::vector<std::optional<double>>& latency_s) {
  DRAGON_CHECK(groups.size() == latency_s.size(), "{} groups for {} latencies", groups.size(), latency_s.size());
  std::map<std::string, double> best;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!latency_s[i] || *latency_s[i] <= 0) continue;
    auto [it, inserted] = best.emplace(groups[i], *latency_s[i]);
    if (!inserted) it->second = std::min(it->second, *latency_s[i]);
  }
  std::vector<double> labels(groups.size(), 0.0);
  for (size_t i = 0; i < groups.size(); ++i) {
    if (latency_s[i] && *latency_s[i] > 0) labels[i] = best.at(groups[i]) / *latency_s[i];
  }
  return labels;
}

std::optional<double> pairwise_accuracy(const std::vector<double>& scores, const std::vector<double>& labels) {
  DRAGON_CHECK(scores.size() == labels.size(), "{} scores for {} labels", scores.size(), labels.size());
  double agree = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    for (size_t j = i + 1; j < scores.size(); ++j) {
      if (labels[i] == labels[j]) continue;
      pairs += 1;
      if (scores[i] == scores[j]) {
        agree += 0.5;
      } else if ((scores[i] > scores[j]) == (labels[i] > labels[j])) {
        agree += 1;
      }
    }
  }
  if (pairs == 0) return std::nullopt;
  return agree / pairs;
}

double top_k_score(const std::vector<double>& scores, const std::vector<double>& labels, int k) {
  DRAGON_CHECK(scores.size() == labels.size() && !scores.empty() && k > 0, "top-k of {} scores, {} labels, k {}",
               scores.size(), labels.size(), k);
  const double best = *std::max_element(labels.begin(), labels.end());
  if (best <= 0) return 0;
  std::vector<size_t> order = by_score(scores);
  double best_top = 0;
  for (size_t i = 0; i < order.size() && i < static_cast<size_t>(k); ++i) best_top = std::max(best_top, labels[order[i]]);
  return best_top / best;
}

double average_peak_score(const std::vector<double>& scores, const std::vector<double>& labels, int k) {
  DRAGON_CHECK(scores.size() == labels.size() && !scores.empty() && k > 0, "a-peak of {} scores, {} labels, k {}",
               scores.size(), labels.size(), k);
  const double best = *std::max_element(labels.begin(), labels.end());
  if (best <= 0) return 0;
  std::vector<size_t> order = by_score(scores);
  const size_t n = std::min(order.size(), static_cast<size_t>(k));
  double running = 0, total = 0;
  for (size_t i = 0; i < n; ++i) {
    running = std::max(running, labels[order[i]]);
    total += running / best;
  }
  return total / static_cast<double>(n);
}

RankingReport evaluate_ranking(CostModel& model, const std::vector<FeaturizedCandidate>& records,
                               const RankingOptions& options) {
  if (options.train_fraction <= 0 || options.train_fraction >= 1) {
    throw UserError("the training fraction must be in (0, 1)");
  }
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < records.size(); ++i) groups[records[i].workload + "\n" + records[i].target].push_back(i);
  std::mt19937_64 engine(options.seed);
  std::vector<size_t> train, test;
  if (options.hold_out == HoldOut::kRecords) {
    for (auto& [key, members] : groups) {
      std::vector<size_t> measured, failed;
      for (size_t i : members) (records[i].latency_s ? measured : failed).push_back(i);
      std::shuffle(measured.begin(), measured.end(), engine);
      const size_t n_train = static_cast<size_t>(std::llround(options.train_fraction * static_cast<double>(measured.size())));
      train.insert(train.end(), measured.begin(), measured.begin() + static_cast<std::ptrdiff_t>(n_train));
      test.insert(test.end(), measured.begin() + static_cast<std::ptrdiff_t>(n_train), measured.end());
      train.insert(train.end(), failed.begin(), failed.end());
    }
  } else {
    std::vector<std::string> keys;
    for (const auto& [key, members] : groups) keys.push_back(key);
    std::shuffle(keys.begin(), keys.end(), engine);
    const size_t n_train = std::max<size_t>(1, static_cast<size_t>(std::llround(options.train_fraction * static_cast<double>(keys.size()))));
    for (size_t g = 0; g < keys.size(); ++g) {
      for (size_t i : groups[keys[g]]) {
        if (g < n_train) {
          train.push_back(i);
        } else if (records[i].latency_s) {
          test.push_back(i);
        }
      }
    }
  }
  std::vector<FeaturizedCandidate> train_set, test_set;
  for (size_t i : train) train_set.push_back(records[i]);
  for (size_t i : test) test_set.push_back(records[i]);

  RankingReport report;
  report.train_records = static_cast<int64_t>(train_set.size());
  report.test_records = static_cast<int64_t>(test_set.size());
  auto start = std::chrono::steady_clock::now();
  model.update(train_set);
  report.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  start = std::chrono::steady_clock::now();
  const std::vector<double> scores = model.predict(test_set);
  report.predict_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::map<std::string, std::vector<size_t>> test_groups;
  for (size_t t = 0; t < test_set.size(); ++t) test_groups[test_set[t].workload + "\n" + test_set[t].target].push_back(t);
  double accuracy_sum = 0;
  int64_t accuracy_groups = 0;
  for (const auto& [key, members] : test_groups) {
    if (members.size() < 2) continue;
    std::vector<double> s, latency_labels;
    std::vector<std::string> keys(members.size(), key);
    std::vector<std::optional<double>> latencies;
    for (size_t t : members) {
      s.push_back(scores[t]);
      latencies.push_back(test_set[t].latency_s);
    }
    const std::vector<double> labels = workload_labels(keys, latencies);
    ++report.groups;
    if (auto a = pairwise_accuracy(s, labels)) {
      accuracy_sum += *a;
      ++accuracy_groups;
    }
    for (int k : options.ks) report.top_k[k] += top_k_score(s, labels, k);
  }
  if (accuracy_groups > 0) report.pairwise_accuracy = accuracy_sum / static_cast<double>(accuracy_groups);
  for (auto& [k, total] : report.top_k) total = report.groups > 0 ? total / static_cast<double>(report.groups) : 0;
  return report;
}

}  // namespace dragon::search
