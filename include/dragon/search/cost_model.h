// The learned cost model of the search (MetaSchedule's XGBModel): it scores scheduled
// candidates so that evolutionary search measures only the promising ones. Scores are
// predicted labels, label = best latency of the workload / latency (1.0 = the best
// measured, 0 = failed), so higher is better and scores of one workload compare.
// Not a measurer and not a database: callers give it what was measured.
//
// Models: RandomCostModel (cold start, and the baseline a learned model must beat) and
// XgbCostModel (gradient-boosted trees over program_features.h rows, through XGBoost's C
// API; random scores until enough records, retrained when the data grew enough).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/search/program_features.h"

namespace dragon::search {

// One scheduled function to score.
struct Candidate {
  // After the schedule and its postprocessors, before lowering.
  ir::PrimFunc scheduled;
  // The workload it schedules (its structural hash or canonical spec): labels are
  // relative to the best latency of the same workload and target, never across.
  std::string workload;
  lower::Target target;
};

// A candidate with what measuring it gave.
struct MeasuredCandidate {
  Candidate candidate;
  // Seconds per run (the harness's median); nullopt when it failed (did not build, was
  // wrong, crashed, hung): label 0, so the model learns to avoid such programs.
  std::optional<double> latency_s;
};

// A candidate's rows, extracted once (search caches them between predict and update).
struct FeaturizedCandidate {
  ProgramFeatures features;
  std::string workload;  // with the target, the group its label is relative to
  std::string target;    // lower::Target::to_string()
  std::optional<double> latency_s;  // for training; ignored by predict
};
// Extracts `candidates`' rows (extract_program_features), on up to `threads` threads
// (0: hardware concurrency). A candidate whose preparation fails (a UserError of a
// pass) gets no rows: every model scores it 0.
std::vector<FeaturizedCandidate> featurize(const std::vector<Candidate>& candidates, int threads = 0);
FeaturizedCandidate featurize(const MeasuredCandidate& measured);

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Adds measured candidates to the training data; a learned model retrains when its
  // policy says so (XgbCostModelOptions). Deterministic for a given seed and sequence.
  virtual void update(const std::vector<FeaturizedCandidate>& measured) = 0;
  void update(const std::vector<MeasuredCandidate>& measured);
  // One score per candidate, in order; higher means predicted faster.
  virtual std::vector<double> predict(const std::vector<FeaturizedCandidate>& candidates) = 0;
  std::vector<double> predict(const std::vector<Candidate>& candidates);
  // Saves to / loads from one file (model and training data, so `dragon tune` resumes
  // and tasks share). A missing, truncated or foreign file is a UserError naming the path
  // and what is wrong.
  virtual void save(const std::filesystem::path& path) const = 0;
  virtual void load(const std::filesystem::path& path) = 0;
};

// Uniform random scores in [0, 1) from a seeded engine: the cold start.
class RandomCostModel : public CostModel {
 public:
  explicit RandomCostModel(uint64_t seed = 1);
  void update(const std::vector<FeaturizedCandidate>& measured) override;
  std::vector<double> predict(const std::vector<FeaturizedCandidate>& candidates) override;
  // The engine's state, so a resumed search draws what it would have.
  void save(const std::filesystem::path& path) const override;
  void load(const std::filesystem::path& path) override;
  using CostModel::predict;
  using CostModel::update;

 private:
  std::mt19937_64 engine_;
};

struct XgbCostModelOptions {
  // XGBoost's parameters as MetaSchedule sets them.
  int max_depth = 10;
  double gamma = 0.001;
  double min_child_weight = 0;
  double eta = 0.2;
  uint64_t seed = 43;
  // Boosting rounds: at most this many, stopping when the training set's label-weighted
  // RMSE of program scores has not improved by 0.1% for early_stopping_rounds (the model
  // keeps the best round). MetaSchedule stops on the training set's a-peak@32, which
  // saturates within a few rounds on our data (xgb_cost_model.cc).
  int max_rounds = 10000;
  int early_stopping_rounds = 50;
  // Scores are random (RandomCostModel with `seed`) until this many measured candidates.
  int64_t min_training_records = 100;
  // Retrain only when the data grew by this fraction since the last training.
  double retrain_growth = 0.2;
  // XGBoost's nthread (0: all cores). One by default: the training sets are small, and on
  // a loaded machine two OpenMP threads made a round 7x slower than one (measured on the
  // 2-core development machine at load 20: 400 rows, 50 rounds, 1.5 s vs 11.3 s).
  int threads = 1;
};

// Gradient-boosted trees through XGBoost's C API, "PackSum": each store row gets a
// prediction and a program's score is the sum over its rows; training fits that sum to
// the label with a squared error weighted by the label (good programs matter most).
class XgbCostModel : public CostModel {
 public:
  explicit XgbCostModel(XgbCostModelOptions options = {});
  ~XgbCostModel() override;
  XgbCostModel(const XgbCostModel&) = delete;
  XgbCostModel& operator=(const XgbCostModel&) = delete;

  void update(const std::vector<FeaturizedCandidate>& measured) override;
  std::vector<double> predict(const std::vector<FeaturizedCandidate>& candidates) override;
  void save(const std::filesystem::path& path) const override;
  void load(const std::filesystem::path& path) override;
  using CostModel::predict;
  using CostModel::update;

  // Whether trees were trained (false: predictions are still random).
  bool trained() const;
  // Measured candidates held as training data.
  int64_t training_records() const;
  // Rounds the last training kept (after early stopping).
  int rounds() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dragon::search
