// The tuning curve: trials are distinct scripts by first appearance, a script measured
// again improves its own trial, defaults, failures and other keys' records are no points,
// and the curve agrees with a brute-force best over every prefix of trials.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "dragon/db/tuning_curve.h"
#include "dragon/support/error.h"
#include "unit/db/db_test_util.h"

namespace dragon::db {
namespace {

using testing::TempDir;

class TuningCurveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    matmul_ = testing::workload_of_spec("matmul:m=32,n=32,k=16,dtype=f32");
    softmax_ = testing::workload_of_spec("softmax:shape=16x256,axis=1,dtype=f32");
    for (const std::string& s : testing::random_scripts(matmul_, 12, 3)) {
      if (!s.empty() && std::find(scripts_.begin(), scripts_.end(), s) == scripts_.end()) scripts_.push_back(s);
    }
  }

  TuningKey key(const Workload& w) { return TuningKey{w.hash, testing::cuda_sm90a(), testing::h200()}; }

  TempDir dir_;
  Workload matmul_, softmax_;
  std::vector<std::string> scripts_;
};

TEST_F(TuningCurveTest, PointsAreWhereTheBestImprovesCountingDistinctScripts) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  db.add_workload(softmax_);
  const TuningKey k = key(matmul_);
  ASSERT_GE(scripts_.size(), 5u);
  EXPECT_TRUE(tuning_curve(db, k).points.empty());
  EXPECT_EQ(tuning_curve(db, k).trials, 0);
  db.commit(testing::ok_record(k, "", {0.5f}));                                                  // default: no trial
  db.commit(testing::ok_record(key(softmax_), scripts_[4], {0.1f}));                             // another key
  db.commit(testing::failed_record(k, scripts_[0], RecordStatus::kWrongResult, "wrong"));        // trial 1
  db.commit(testing::ok_record(k, scripts_[1], {4.0f}));                                         // trial 2
  db.commit(testing::ok_record(k, scripts_[2], {5.0f}));                                         // trial 3: slower
  db.commit(testing::ok_record(k, scripts_[3], {2.0f}));                                         // trial 4
  db.commit(testing::ok_record(k, scripts_[1], {3.0f}));                                         // trial 2 again
  db.commit(testing::ok_record(k, scripts_[2], {1.0f}));                                         // trial 3 again
  const TuningCurve curve = tuning_curve(db, k);
  EXPECT_EQ(curve.trials, 4);
  ASSERT_EQ(curve.points.size(), 2u);
  EXPECT_EQ(curve.points[0].trial, 2);
  EXPECT_DOUBLE_EQ(curve.points[0].best_ms, 3.0);
  EXPECT_EQ(curve.points[0].best.record.script, scripts_[1]);
  EXPECT_EQ(curve.points[1].trial, 3);
  EXPECT_DOUBLE_EQ(curve.points[1].best_ms, 1.0);
  EXPECT_FALSE(curve.best_within(1).has_value());
  EXPECT_DOUBLE_EQ(*curve.best_ms_within(2), 3.0);
  EXPECT_DOUBLE_EQ(*curve.best_ms_within(100), 1.0);
  EXPECT_THROW(curve.best_within(0), UserError);
}

TEST_F(TuningCurveTest, AgreesWithABruteForceBestOverEveryPrefix) {
  Database db = Database::open(dir_.file("t.db"));
  db.add_workload(matmul_);
  const TuningKey k = key(matmul_);
  std::mt19937_64 rng(7);
  std::vector<Record> committed;
  for (int i = 0; i < 60; ++i) {
    const std::string& script = scripts_[rng() % scripts_.size()];
    Record r = rng() % 5 == 0 ? testing::failed_record(k, script, RecordStatus::kBuildFailed, "nvrtc")
                              : testing::ok_record(k, script, testing::random_samples(rng, 1.0 + (rng() % 100) / 10.0));
    db.commit(r);
    committed.push_back(r);
  }
  // Trial numbers by first appearance, then the brute-force best of each prefix.
  std::map<std::string, int64_t> trial_of;
  for (const Record& r : committed) trial_of.emplace(r.script, static_cast<int64_t>(trial_of.size()) + 1);
  const TuningCurve curve = tuning_curve(db, k);
  EXPECT_EQ(curve.trials, static_cast<int64_t>(trial_of.size()));
  for (int64_t budget = 1; budget <= curve.trials + 1; ++budget) {
    std::optional<double> expected;
    for (const Record& r : committed) {
      if (r.status != RecordStatus::kOk || trial_of[r.script] > budget) continue;
      if (!expected || *r.median_ms() < *expected) expected = r.median_ms();
    }
    EXPECT_EQ(curve.best_ms_within(budget), expected) << budget;
  }
  EXPECT_EQ(curve.best_ms_within(curve.trials), db.best_script(k)->record.median_ms());
}

}  // namespace
}  // namespace dragon::db
