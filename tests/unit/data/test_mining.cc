// The mining rules (data/mining.h) on synthetic records: the default schedule as the best
// gives nothing; the ratio range and the significance test choose refinement prompts;
// records under 6 samples never qualify; the per-workload cap spreads its picks over the
// range; the order of the records changes nothing; every latency is a record's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "dragon/data/mining.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

constexpr db::WorkloadHash kHash = 0x1234abcd5678ef90ull;

CorpusEntry entry() { return CorpusEntry{"matmul:m=32,n=32,k=32", kHash, "gpt2", "test", Split::kValidation}; }

db::TuningKey key() { return db::TuningKey{kHash, {"cpu", "x86-64"}, {"test cpu", ""}}; }

// Records in commit order; ids increase.
class Records {
 public:
  // `samples` copies of `ms` (a tight record: its interval is [ms, ms]).
  Records& ok(const std::string& script, double ms, int samples = 8) {
    return ok_samples(script, std::vector<float>(static_cast<size_t>(samples), static_cast<float>(ms)));
  }
  Records& ok_samples(const std::string& script, std::vector<float> samples) {
    db::StoredRecord r;
    r.id = next_id_++;
    r.record.key = key();
    r.record.script = script;
    r.record.status = db::RecordStatus::kOk;
    r.record.samples_ms = std::move(samples);
    r.record.origin = "search";
    records_.push_back(r);
    return *this;
  }
  Records& failed(const std::string& script) {
    db::StoredRecord r;
    r.id = next_id_++;
    r.record.key = key();
    r.record.script = script;
    r.record.status = db::RecordStatus::kWrongResult;
    r.record.error = "mismatch";
    records_.push_back(r);
    return *this;
  }
  const std::vector<db::StoredRecord>& get() const { return records_; }

 private:
  std::vector<db::StoredRecord> records_;
  int64_t next_id_ = 1;
};

MinedWorkload mine(const Records& r, MiningOptions options = {}) { return mine_workload(entry(), r.get(), options); }

std::vector<std::string> prompts(const MinedWorkload& m) {
  std::vector<std::string> out;
  for (const Example& e : m.refinements) out.push_back(*e.existing_script);
  return out;
}

TEST(Mining, NothingVerifiedGivesNothing) {
  Records r;
  r.failed("").failed("a");
  MinedWorkload m = mine(r);
  EXPECT_EQ(m.outcome, MiningOutcome::kNoOkRecord);
  EXPECT_FALSE(m.construction);
  EXPECT_TRUE(m.refinements.empty());
  EXPECT_EQ(mine(Records()).outcome, MiningOutcome::kNoOkRecord);
}

TEST(Mining, TheDefaultScheduleAsTheBestGivesNoExample) {
  Records r;
  r.ok("", 1.0).ok("a", 2.0).ok("b", 3.0);
  MinedWorkload m = mine(r);
  EXPECT_EQ(m.outcome, MiningOutcome::kDefaultBest);
  EXPECT_FALSE(m.construction) << "the default schedule is the empty script: nothing to teach";
  EXPECT_TRUE(m.refinements.empty()) << "a refinement's target would be the empty script";
  EXPECT_EQ(m.ok_scripts, 3);
}

TEST(Mining, ConstructionIsTheBestScriptWithTheDefaultsLatencyAsThePrompts) {
  Records r;
  r.ok("", 4.0).ok("slow", 2.0).failed("fastest-but-wrong").ok("best", 1.0);
  MinedWorkload m = mine(r);
  ASSERT_EQ(m.outcome, MiningOutcome::kExamples);
  ASSERT_TRUE(m.construction);
  const Example& c = *m.construction;
  EXPECT_EQ(c.kind, ExampleKind::kConstruction);
  EXPECT_EQ(c.script, "best");
  EXPECT_FALSE(c.existing_script);
  EXPECT_EQ(c.spec, entry().spec);
  EXPECT_EQ(c.hash, kHash);
  EXPECT_EQ(c.family, "gpt2");
  EXPECT_EQ(c.split, Split::kValidation);
  EXPECT_DOUBLE_EQ(c.target_latency.median_ms, 1.0);
  EXPECT_EQ(c.target_latency.samples, 8);
  ASSERT_TRUE(c.prompt_latency);
  EXPECT_DOUBLE_EQ(c.prompt_latency->median_ms, 4.0);
  EXPECT_DOUBLE_EQ(*c.speedup(), 4.0);
  // The refinement: "slow" (2x) -> "best".
  ASSERT_EQ(m.refinements.size(), 1u);
  EXPECT_EQ(m.refinements[0].script, "best");
  EXPECT_EQ(*m.refinements[0].existing_script, "slow");
  EXPECT_DOUBLE_EQ(*m.refinements[0].speedup(), 2.0);
}

TEST(Mining, AConstructionWithoutAMeasuredDefaultHasNoPromptLatency) {
  Records r;
  r.failed("").ok("best", 1.0);
  MinedWorkload m = mine(r);
  ASSERT_TRUE(m.construction);
  EXPECT_FALSE(m.construction->prompt_latency) << "no latency is invented for a default that was not verified";
  EXPECT_FALSE(m.construction->speedup());
}

TEST(Mining, RefinementPromptsLieInTheRatioRange) {
  Records r;
  r.ok("best", 1.0).ok("x1.1", 1.1).ok("x1.25", 1.25).ok("x3.9", 3.9).ok("x4.2", 4.2).ok("", 10.0);
  MiningOptions options;
  options.refinements_per_workload = 10;
  MinedWorkload m = mine(r, options);
  EXPECT_EQ(prompts(m), (std::vector<std::string>{"x1.25", "x3.9"}));
  EXPECT_EQ(m.in_ratio_range, 2);
  EXPECT_EQ(m.significant, 2);
  options.min_ratio = 1.05;
  options.max_ratio = 5;
  EXPECT_EQ(prompts(mine(r, options)), (std::vector<std::string>{"x1.1", "x1.25", "x3.9", "x4.2"}));
  const std::vector<std::string> wide = prompts(mine(r, options));
  EXPECT_EQ(std::count(wide.begin(), wide.end(), ""), 0) << "the default schedule is never a refinement prompt";
}

TEST(Mining, APromptMustBeSignificantlySlowerUnderTheIntervals) {
  Records r;
  // The best's 95% interval of 6 samples spans all of them: [0.5, 3].
  r.ok_samples("best", {0.5f, 1, 1, 1, 1, 3});
  r.ok("overlapping", 2.0);  // median ratio 2, but its interval [2, 2] is inside the best's
  MinedWorkload m = mine(r);
  ASSERT_TRUE(m.construction);
  EXPECT_TRUE(m.refinements.empty());
  EXPECT_EQ(m.in_ratio_range, 1);
  EXPECT_EQ(m.significant, 0);

  Records clear;
  clear.ok_samples("best", {0.9f, 1, 1, 1, 1, 1.1f});
  clear.ok_samples("slower", {1.9f, 2, 2, 2, 2, 2.1f});
  EXPECT_EQ(prompts(mine(clear)), (std::vector<std::string>{"slower"}));
}

TEST(Mining, RecordsUnderSixSamplesNeverQualify) {
  Records few_prompt;
  few_prompt.ok("best", 1.0).ok("five", 2.0, 5).ok("six", 2.5, 6);
  EXPECT_EQ(prompts(mine(few_prompt)), (std::vector<std::string>{"six"}));

  Records few_best;
  few_best.ok("best", 1.0, 5).ok("slower", 2.0);
  MinedWorkload m = mine(few_best);
  ASSERT_TRUE(m.construction) << "a construction needs no interval";
  EXPECT_TRUE(m.refinements.empty()) << "a target without an interval proves no speedup";
}

TEST(Mining, TheCapSpreadsDistinctPromptsOverTheRange) {
  Records r;
  r.ok("best", 1.0);
  // Ten prompts spaced evenly in log from 1.21x to 3.9x.
  for (int i = 0; i < 10; ++i) r.ok("p" + std::to_string(i), 1.21 * std::pow(3.9 / 1.21, i / 9.0));
  MiningOptions options;
  options.refinements_per_workload = 2;
  EXPECT_EQ(prompts(mine(r, options)), (std::vector<std::string>{"p0", "p9"})) << "the two ends of the range";
  options.refinements_per_workload = 3;
  EXPECT_EQ(prompts(mine(r, options)), (std::vector<std::string>{"p0", "p5", "p9"}))
      << "and the nearest to the range's middle in log, sqrt(1.2 * 4) = 2.19: p5 (2.32x) before p4 (2.04x)";
  options.refinements_per_workload = 1;
  EXPECT_EQ(prompts(mine(r, options)).size(), 1u);
  options.refinements_per_workload = 0;
  EXPECT_TRUE(mine(r, options).refinements.empty());
  options.refinements_per_workload = 20;
  std::vector<std::string> all = prompts(mine(r, options));
  EXPECT_EQ(all.size(), 10u);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end()) << "each prompt script once";
  EXPECT_EQ(mine(r, options).significant, 10);
}

TEST(Mining, AScriptMeasuredTwiceCountsOnceWithItsFastestRecord) {
  Records r;
  r.ok("best", 1.0).ok("again", 3.0).ok("again", 2.0).ok("again", 2.5);
  MinedWorkload m = mine(r);
  ASSERT_EQ(m.refinements.size(), 1u);
  EXPECT_DOUBLE_EQ(m.refinements[0].prompt_latency->median_ms, 2.0);
  EXPECT_EQ(m.ok_scripts, 2);
}

TEST(Mining, TheOrderOfTheRecordsChangesNothing) {
  Records r;
  r.ok("", 9.0).failed("broken");
  for (int i = 0; i < 12; ++i) r.ok("s" + std::to_string(i), 1.0 + 0.3 * i);
  r.ok("tie", 1.0);  // the same median as "s0", committed later: s0 stays the best
  const MinedWorkload expected = mine(r);
  ASSERT_TRUE(expected.construction);
  EXPECT_EQ(expected.construction->script, "s0");
  std::vector<db::StoredRecord> shuffled = r.get();
  std::mt19937_64 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    MinedWorkload m = mine_workload(entry(), shuffled, {});
    EXPECT_EQ(m.construction, expected.construction);
    EXPECT_EQ(m.refinements, expected.refinements);
  }
}

TEST(Mining, BadOptionsAreUserErrors) {
  Records r;
  r.ok("best", 1.0);
  EXPECT_THROW(mine(r, {0.9, 4.0, 2}), UserError);
  EXPECT_THROW(mine(r, {2.0, 1.5, 2}), UserError);
  EXPECT_THROW(mine(r, {1.2, 4.0, -1}), UserError);
}

}  // namespace
}  // namespace dragon::data
