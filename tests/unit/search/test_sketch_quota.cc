// Sketch quotas: every sketch still exploring or competitive gets its best-ranked programs
// into the batch even when the ranking puts another sketch's programs first; a sketch
// measured enough and far behind gets none; one sketch alone follows the ranking.
#include <gtest/gtest.h>

#include <set>

#include "dragon/search/evolutionary_search.h"
#include "dragon/search/sketch_quota.h"
#include "search_test_sketches.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::search {
namespace {

constexpr uint64_t kPlain = 11, kTensorCore = 22, kThird = 33;

std::vector<uint64_t> ranking(int plain_first, int tensor_core_after) {
  std::vector<uint64_t> r(static_cast<size_t>(plain_first), kPlain);
  r.insert(r.end(), static_cast<size_t>(tensor_core_after), kTensorCore);
  return r;
}

int count_of(const std::vector<uint64_t>& ranked, const std::vector<size_t>& picked, uint64_t sketch) {
  int n = 0;
  for (size_t i : picked) n += ranked[i] == sketch ? 1 : 0;
  return n;
}

TEST(SketchQuota, ASketchTheModelRanksLastStillGetsItsShareWhileExploring) {
  const std::vector<uint64_t> ranked = ranking(100, 20);
  std::map<uint64_t, SketchStanding> standing = {{kPlain, {48, 16.0}}, {kTensorCore, {2, 58.0}}};
  std::vector<size_t> picked = pick_with_sketch_quotas(ranked, standing, 32);
  ASSERT_EQ(picked.size(), 32u);
  EXPECT_EQ(count_of(ranked, picked, kTensorCore), 4) << "a quarter of the batch split over two sketches";
  // Its best-ranked ones: the first tensor-core entries of the ranking.
  for (size_t i : picked) {
    if (ranked[i] == kTensorCore) EXPECT_LT(i, 104u);
  }
  // Without quotas this ranking gives it nothing: the plain sketch's 100 come first.
  SketchQuotaOptions none;
  none.quota_share = 0;
  none.explore_trials = 0;
  none.competitive_ratio = 0;
  EXPECT_EQ(count_of(ranked, pick_with_sketch_quotas(ranked, standing, 32, none), kTensorCore), 0);
}

TEST(SketchQuota, ASketchMeasuredEnoughAndFarBehindGetsNoQuota) {
  const std::vector<uint64_t> ranked = ranking(100, 20);
  std::map<uint64_t, SketchStanding> standing = {{kPlain, {48, 16.0}}, {kTensorCore, {8, 58.0}}};
  EXPECT_EQ(count_of(ranked, pick_with_sketch_quotas(ranked, standing, 32), kTensorCore), 0);
  // Competitive (within 2x of the best): its quota again; and the plain one keeps its own
  // when the tensor-core sketch leads.
  standing[kTensorCore] = {8, 10.0};
  std::vector<size_t> picked = pick_with_sketch_quotas(ranked, standing, 32);
  EXPECT_EQ(count_of(ranked, picked, kTensorCore), 4);
  std::vector<uint64_t> reversed(ranked.rbegin(), ranked.rend());
  standing[kPlain] = {48, 18.0};
  EXPECT_EQ(count_of(reversed, pick_with_sketch_quotas(reversed, standing, 32), kPlain), 4 + 8)
      << "the plain sketch's quota of 4, then 8 more after the 20 tensor-core entries";
}

TEST(SketchQuota, QuotasNeverExceedTheBatchOrRepeatAnEntry) {
  std::vector<uint64_t> ranked = {kPlain, kThird, kTensorCore, kPlain, kPlain, kThird};
  std::vector<size_t> picked = pick_with_sketch_quotas(ranked, {}, 4);
  ASSERT_EQ(picked.size(), 4u);
  std::set<size_t> distinct(picked.begin(), picked.end());
  EXPECT_EQ(distinct.size(), 4u);
  EXPECT_EQ(count_of(ranked, picked, kTensorCore), 1) << "each unknown sketch gets at least one slot";
  EXPECT_EQ(pick_with_sketch_quotas(ranked, {}, 10).size(), ranked.size());
  EXPECT_TRUE(pick_with_sketch_quotas({}, {}, 4).empty());
  // One sketch alone: the ranking's order.
  std::vector<uint64_t> one(5, kPlain);
  EXPECT_EQ(pick_with_sketch_quotas(one, {}, 3), (std::vector<size_t>{0, 1, 2}));
}

TEST(SketchQuota, TheSketchKeyIgnoresDecisionsAndPostprocessingButNotTheSketch) {
  ir::PrimFunc func = schedule::testing::workload("matmul:m=64,n=64,k=64");
  std::unique_ptr<SketchSpace> space =
      make_trace_space(func, {testing::cpu_matmul_sketch(func), schedule::Schedule(func).trace()});
  std::optional<uint64_t> first_of_sketch[2];
  for (int64_t seed = 1; seed <= 6; ++seed) {
    const size_t sketch = static_cast<size_t>(seed % 2);
    Realized r = space->sample(sketch, seed);
    ASSERT_TRUE(r.ok());
    const uint64_t key = sketch_key(*r.trace);
    if (!first_of_sketch[sketch]) first_of_sketch[sketch] = key;
    EXPECT_EQ(key, *first_of_sketch[sketch]) << "sketch " << sketch << ", seed " << seed;
  }
  EXPECT_NE(*first_of_sketch[0], *first_of_sketch[1]);
}

}  // namespace
}  // namespace dragon::search
