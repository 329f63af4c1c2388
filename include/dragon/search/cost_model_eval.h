// How well a cost model ranks: labels, pairwise accuracy, TVM's top-k score and
// MetaSchedule's a-peak@k, and the held-out evaluation that `dragon cost-model eval` and
// the tests run. Not a model (cost_model.h) and not a measurer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dragon/search/cost_model.h"

namespace dragon::search {

// label = best latency of the record's group / its latency (1 for the best); 0 for a
// record without a latency (failed). Groups are workload and target.
std::vector<double> workload_labels(const std::vector<std::string>& groups,
                                    const std::vector<std::optional<double>>& latency_s);

// Of all pairs with different labels, the fraction the scores order the same way (a tie
// in scores counts half). nullopt when there is no such pair.
std::optional<double> pairwise_accuracy(const std::vector<double>& scores, const std::vector<double>& labels);
// TVM's top-k score: the best label over the best label among the k highest scores, i.e.
// best true latency / best true latency among the model's top k (1 = the model's top k
// holds the best program). Ties in score are broken by position.
double top_k_score(const std::vector<double>& scores, const std::vector<double>& labels, int k);
// MetaSchedule's a-peak@k: the mean over i = 1..k of the best label among the i highest
// scores over the best label (its early-stopping metric).
double average_peak_score(const std::vector<double>& scores, const std::vector<double>& labels, int k);

struct RankingReport {
  int64_t train_records = 0;
  int64_t test_records = 0;
  int64_t groups = 0;  // workload/target groups scored (with at least two held-out records)
  // Means over groups, each group weighted equally.
  double pairwise_accuracy = 0;
  std::map<int, double> top_k;  // k -> top-k score
  double train_seconds = 0;     // update() on the training part
  double predict_seconds = 0;   // predict() on the held-out part
};

enum class HoldOut {
  kRecords,    // a fraction of every group's records is held out (ranking within known workloads)
  kWorkloads,  // whole groups are held out (ranking on workloads never trained on)
};

struct RankingOptions {
  double train_fraction = 0.5;  // of each group's records, or of the groups
  HoldOut hold_out = HoldOut::kRecords;
  uint64_t seed = 1;
  std::vector<int> ks = {1, 5, 32};
};

// Splits `records` (failed ones, without a latency, are training data only) with a
// seeded shuffle, updates `model` with the training part in one call, predicts the
// held-out part and scores it group by group.
RankingReport evaluate_ranking(CostModel& model, const std::vector<FeaturizedCandidate>& records,
                               const RankingOptions& options = {});

}  // namespace dragon::search
