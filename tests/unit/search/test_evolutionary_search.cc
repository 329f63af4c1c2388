// Evolutionary search over hand-made sketch spaces: batches of distinct, never-measured,
// correct programs; the same batches for a seed whatever the thread count; measured
// programs never proposed again; a space whose sketches all fail yields an empty batch
// instead of hanging.
#include <gtest/gtest.h>

#include <unordered_set>

#include "dragon/search/evolutionary_search.h"
#include "search_test_sketches.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::search {
namespace {

using schedule::testing::same_outputs;
using schedule::testing::workload;

struct Fixture {
  ir::PrimFunc func = workload("matmul:m=64,n=64,k=64");
  std::unique_ptr<SketchSpace> space = make_trace_space(func, {testing::cpu_matmul_sketch(func)});
  RandomCostModel model{7};
};

EvolutionarySearchOptions small(int threads = 1) {
  EvolutionarySearchOptions o;
  o.population = 24;
  o.init_min_unmeasured = 12;
  o.genetic_num_iters = 2;
  o.threads = threads;
  o.seed = 5;
  return o;
}

MeasureResult ok(double ms) {
  MeasureResult r;
  r.samples_ms = {ms};
  return r;
}

TEST(EvolutionarySearch, ProposesDistinctCorrectProgramsNeverMeasuredBefore) {
  Fixture f;
  EvolutionarySearch search(*f.space, lower::Target::cpu(), "matmul", f.model, default_mutators(lower::Target::cpu()),
                            small());
  std::unordered_set<uint64_t> seen;
  for (int round = 0; round < 3; ++round) {
    std::vector<SearchCandidate> batch = search.propose(8);
    ASSERT_FALSE(batch.empty());
    std::vector<MeasureResult> results;
    for (const SearchCandidate& c : batch) {
      EXPECT_TRUE(seen.insert(c.hash).second) << "proposed twice:\n" << c.trace.to_string();
      results.push_back(ok(1.0 + static_cast<double>(seen.size())));
    }
    EXPECT_TRUE(same_outputs(f.func, batch.front().scheduled, 3, /*exact=*/false));
    search.report(batch, results);
  }
  EXPECT_EQ(search.measured_count(), static_cast<int64_t>(seen.size()));
  ASSERT_TRUE(search.best_ms().has_value());
  EXPECT_DOUBLE_EQ(*search.best_ms(), 2.0);
}

TEST(EvolutionarySearch, TheSameSeedGivesTheSameBatchWhateverTheThreads) {
  Fixture a, b;
  EvolutionarySearch one(*a.space, lower::Target::cpu(), "matmul", a.model, default_mutators(lower::Target::cpu()), small(1));
  EvolutionarySearch four(*b.space, lower::Target::cpu(), "matmul", b.model, default_mutators(lower::Target::cpu()), small(4));
  std::vector<SearchCandidate> x = one.propose(6), y = four.propose(6);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].hash, y[i].hash);
}

TEST(EvolutionarySearch, MeasuredRecordsSeedTheSearchAndAreNotProposedAgain) {
  Fixture f;
  EvolutionarySearch first(*f.space, lower::Target::cpu(), "matmul", f.model, default_mutators(lower::Target::cpu()), small());
  std::vector<SearchCandidate> batch = first.propose(5);
  std::vector<EvolutionarySearch::MeasuredTrace> records;
  for (size_t i = 0; i < batch.size(); ++i) records.push_back({batch[i].trace, i == 2 ? std::nullopt : std::optional<double>(3.0 + i)});
  EvolutionarySearch resumed(*f.space, lower::Target::cpu(), "matmul", f.model, default_mutators(lower::Target::cpu()), small());
  EXPECT_EQ(resumed.add_measured(records), static_cast<int64_t>(batch.size()));
  EXPECT_DOUBLE_EQ(*resumed.best_ms(), 3.0);
  std::unordered_set<uint64_t> old;
  for (const SearchCandidate& c : batch) old.insert(c.hash);
  for (const SearchCandidate& c : resumed.propose(8)) EXPECT_EQ(old.count(c.hash), 0u);
}

// A trace of another workload (transfer) is replayed here, its tiles repaired to these
// extents, and heads the next batch; one measured already is not proposed again.
TEST(EvolutionarySearch, SeedsFromAnotherWorkloadHeadTheNextBatch) {
  Fixture f;
  const ir::PrimFunc other = workload("matmul:m=32,n=32,k=16");
  std::unique_ptr<SketchSpace> other_space = make_trace_space(other, {testing::cpu_matmul_sketch(other)});
  Realized donor = other_space->sample(0, 3);
  ASSERT_TRUE(donor.ok());
  EvolutionarySearch search(*f.space, lower::Target::cpu(), "matmul", f.model, default_mutators(lower::Target::cpu()),
                            small());
  EXPECT_EQ(search.add_seeds({*donor.trace, *donor.trace}), 1) << "the same program once";
  std::vector<SearchCandidate> batch = search.propose(8);
  ASSERT_FALSE(batch.empty());
  EXPECT_EQ(search.statistics().seeded, 1);
  EXPECT_EQ(batch.front().sketch, sketch_key(*donor.trace));
  EXPECT_TRUE(same_outputs(f.func, batch.front().scheduled, 3, /*exact=*/false));
  // Measured now: seeding it again adds nothing.
  search.report(batch, std::vector<MeasureResult>(batch.size(), ok(1.0)));
  EXPECT_EQ(search.add_seeds({*donor.trace}), 0);
}

TEST(EvolutionarySearch, ASpaceThatYieldsNothingGivesAnEmptyBatch) {
  ir::PrimFunc func = workload("relu:shape=8x8");
  // The sketch replays, but a postprocessor refuses every program.
  std::unique_ptr<SketchSpace> space = make_trace_space(func, {schedule::Schedule(func).trace()},
                                                        {[](schedule::Schedule&) { throw UserError("refused"); }});
  RandomCostModel model(1);
  EvolutionarySearch search(*space, lower::Target::cpu(), "relu", model, default_mutators(lower::Target::cpu()), small());
  EXPECT_TRUE(search.propose(8).empty());
  EXPECT_GT(search.statistics().sample_failures, 0);
}

}  // namespace
}  // namespace dragon::search
