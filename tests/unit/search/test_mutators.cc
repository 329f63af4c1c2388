// Mutators: each changes exactly one decision of its kind, keeps it valid (tile products,
// the innermost bound, valid compute locations), and the mutated trace replays to a program
// that computes what the unscheduled function computes.
#include <gtest/gtest.h>

#include "dragon/search/mutator.h"
#include "search_test_sketches.h"
#include "unit/schedule/schedule_test_util.h"

namespace dragon::search {
namespace {

using schedule::Arg;
using schedule::InstructionKind;
using schedule::Schedule;
using schedule::Trace;
using schedule::testing::same_outputs;
using schedule::testing::workload;

// The indices whose decisions differ between two traces of the same instructions.
std::vector<size_t> changed_decisions(const Trace& a, const Trace& b) {
  std::vector<size_t> changed;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a.decision(i) != b.decision(i)) changed.push_back(i);
  }
  return changed;
}

std::vector<int64_t> ints(const Arg& decision) {
  std::vector<int64_t> out;
  for (const Arg& a : *decision.as<Arg::List>()) out.push_back(*a.as<int64_t>());
  return out;
}

TEST(MutateTileSize, MovesAFactorBetweenLevelsOfOneTile) {
  ir::PrimFunc func = workload("matmul:m=64,n=64,k=64");
  Trace trace = testing::cpu_matmul_sketch(func);
  auto mutator = make_mutate_tile_size();
  schedule::RandomEngine rng(3);
  for (int round = 0; round < 20; ++round) {
    std::optional<Trace> mutated = mutator->apply(trace, func, rng);
    ASSERT_TRUE(mutated.has_value());
    std::vector<size_t> changed = changed_decisions(trace, *mutated);
    ASSERT_EQ(changed.size(), 1u) << mutated->to_string();
    ASSERT_EQ((*mutated)[changed[0]].kind, InstructionKind::SamplePerfectTile);
    std::vector<int64_t> tiles = ints(*mutated->decision(changed[0]));
    EXPECT_EQ(tiles[0] * tiles[1], 64);
    EXPECT_LE(tiles[1], 64);
    Schedule replayed = schedule::replay(*mutated, func);
    EXPECT_TRUE(same_outputs(func, replayed.func(), 5, /*exact=*/false));
    trace = *mutated;
  }
}

TEST(MutateTileSize, NothingToChangeInATraceWithoutTiles) {
  ir::PrimFunc func = workload("softmax:shape=8x64");
  schedule::RandomEngine rng(1);
  EXPECT_FALSE(make_mutate_tile_size()->apply(testing::softmax_location_sketch(func), func, rng).has_value());
}

TEST(MutateUnroll, RedrawsOnlyTheUnrollDepth) {
  ir::PrimFunc func = workload("matmul:m=32,n=32,k=32");
  Trace trace = testing::cpu_matmul_sketch(func);
  schedule::RandomEngine rng(5);
  std::optional<Trace> mutated = make_mutate_unroll()->apply(trace, func, rng);
  ASSERT_TRUE(mutated.has_value());
  std::vector<size_t> changed = changed_decisions(trace, *mutated);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ((*mutated)[changed[0]].kind, InstructionKind::SampleCategorical);
  EXPECT_NE(*mutated->decision(changed[0])->as<int64_t>(), *trace.decision(changed[0])->as<int64_t>());
}

TEST(MutateThreadBinding, RedrawsTheSampledThreadCount) {
  ir::PrimFunc func = workload("relu:shape=64x1024");
  Trace trace = testing::gpu_autobind_sketch(func);
  schedule::RandomEngine rng(2);
  std::optional<Trace> mutated = make_mutate_thread_binding()->apply(trace, func, rng);
  ASSERT_TRUE(mutated.has_value());
  std::vector<size_t> changed = changed_decisions(trace, *mutated);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ((*mutated)[changed[0]].kind, InstructionKind::SampleCategorical);
  Schedule replayed = schedule::replay(*mutated, func);
  EXPECT_TRUE(same_outputs(func, replayed.func(), 5));
  // The unroll mutator finds nothing here: its categorical is not an unroll depth.
  EXPECT_FALSE(make_mutate_unroll()->apply(trace, func, rng).has_value());
}

TEST(MutateComputeLocation, MovesABlockToAnotherValidLocation) {
  ir::PrimFunc func = workload("softmax:shape=8x64");
  Trace trace = testing::softmax_location_sketch(func);
  auto mutator = make_mutate_compute_location();
  schedule::RandomEngine rng(11);
  int moved = 0;
  for (int round = 0; round < 12; ++round) {
    std::optional<Trace> mutated = mutator->apply(trace, func, rng);
    if (!mutated) continue;
    std::vector<size_t> changed = changed_decisions(trace, *mutated);
    ASSERT_EQ(changed.size(), 1u);
    EXPECT_EQ((*mutated)[changed[0]].kind, InstructionKind::SampleComputeLocation);
    // The new decision is one the sampler keeps (no repair), and the program is right.
    Schedule replayed = schedule::replay(*mutated, func);
    EXPECT_EQ(replayed.trace().decision(changed[0]), mutated->decision(changed[0])) << mutated->to_string();
    EXPECT_TRUE(same_outputs(func, replayed.func(), 5));
    trace = replayed.trace();
    ++moved;
  }
  EXPECT_GT(moved, 0);
}

TEST(Mutate, DrawsAmongMutatorsThatApply) {
  ir::PrimFunc func = workload("matmul:m=32,n=32,k=32");
  Trace trace = testing::cpu_matmul_sketch(func);
  schedule::RandomEngine rng(9);
  // Compute location has nothing to move here and thread binding nothing to redraw: every
  // draw still gives a neighbour, from the mutators that apply.
  std::vector<WeightedMutator> only_inapplicable_first = {{make_mutate_compute_location(), 0.99},
                                                          {make_mutate_thread_binding(), 0.99},
                                                          {make_mutate_tile_size(), 0.01}};
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(mutate(trace, func, only_inapplicable_first, rng).has_value());
  Schedule plain(func);
  EXPECT_FALSE(mutate(plain.trace(), func, default_mutators(lower::Target::cpu()), rng).has_value());
}

}  // namespace
}  // namespace dragon::search
