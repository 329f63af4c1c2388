// Traces: replay, JSON in TVM's layout (exact text, round trips, aliases, malformed
// input), decision changes with perfect-tile repair, simplification, and the RNG.
#include <gtest/gtest.h>

#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

// A small sketch in the style of TVM's: lookups, a sampled tiling, a split by sampled
// factors, annotations (string and sampled), a postprocessing marker.
Schedule sketch(const ir::PrimFunc& func) {
  Schedule sch(func);
  BlockRV c = sch.get_block("C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  std::vector<ExprRV> tile = sch.sample_perfect_tile(loops[0], 2, 4, std::vector<int64_t>{4, 4});
  sch.split(loops[0], {tile[0], tile[1]});
  sch.annotate(c, "meta_schedule.tiling_structure", std::string("SSR"));
  ExprRV v = sch.sample_categorical({1, 2, 3, 4}, {0.25, 0.25, 0.25, 0.25}, int64_t{1});
  sch.annotate(c, "meta_schedule.cooperative_fetch", v);
  sch.enter_postproc();
  sch.unroll(loops[2]);
  return sch;
}

TEST(TraceJson, ExactTvmLayout) {
  Schedule sch = sketch(workload("matmul:m=16,n=8,k=8"));
  EXPECT_EQ(trace_to_json(sch.trace()),
            "[[[\"GetBlock\",[],[\"C\",\"main\"],[\"b0\"]],"
            "[\"GetLoops\",[\"b0\"],[],[\"l1\",\"l2\",\"l3\"]],"
            "[\"SamplePerfectTile\",[\"l1\"],[2,4],[\"v4\",\"v5\"]],"
            "[\"Split\",[\"l1\",\"v4\",\"v5\"],[true,false],[\"l6\",\"l7\"]],"
            "[\"Annotate\",[\"b0\",\"\\\"SSR\\\"\"],[\"meta_schedule.tiling_structure\"],[]],"
            "[\"SampleCategorical\",[],[[1,2,3,4],[0.25,0.25,0.25,0.25]],[\"v8\"]],"
            "[\"Annotate\",[\"b0\",\"v8\"],[\"meta_schedule.cooperative_fetch\"],[]],"
            "[\"EnterPostproc\",[],[],[]],"
            "[\"Unroll\",[\"l3\"],[],[]]],"
            "[[2,[4,4]],[5,1]]]");
  EXPECT_TRUE(replays_exactly(sch));
}

TEST(TraceJson, TvmMinimalExampleAndAliases) {
  const std::string tvm = R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]]],[]])";
  Trace t = trace_from_json(tvm);
  EXPECT_EQ(trace_to_json(t), tvm);
  const std::string head = R"([[["GetSBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]]],[]])";
  EXPECT_TRUE(trace_from_json(head) == t);
  Schedule sch(workload("matmul:m=4,n=4,k=4"));
  t.apply_to(sch);
  EXPECT_EQ(sch.trace().size(), 2u);
  // Split with the single attr of TVM v0.12-0.16 replays too.
  Trace old = trace_from_json(
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],)"
      R"(["Split",["l1","None",2],[true],["l4","l5"]]],[]])");
  Schedule split = replay(old, workload("matmul:m=4,n=4,k=4"));
  EXPECT_TRUE(has_line(ir::print_function(split.func()), "for i0_0 in 2 {"));
}

TEST(TraceJson, TvmSketchRoundTripsByteForByte) {
  // Flattened Split/Fuse/Reorder inputs, a nested list input, a quoted string input, bool
  // and negative attrs, float lists, and kinds whose primitives land later.
  const std::string sketch =
      R"([[["GetBlock",[],["C","main"],["b0"]],)"
      R"(["GetBlock",[],["root","main"],["b1"]],)"
      R"(["Annotate",["b0","\"SSSRRSRS\""],["meta_schedule.tiling_structure"],[]],)"
      R"(["GetLoops",["b0"],[],["l2","l3","l4"]],)"
      R"(["SamplePerfectTile",["l2"],[2,64],["v5","v6"]],)"
      R"(["Split",["l2","v5","v6"],[true,false],["l7","l8"]],)"
      R"(["Reorder",["l8","l7"],[],[]],)"
      R"(["Fuse",["l8","l7"],[true],["l9"]],)"
      R"(["Bind",["l9"],["blockIdx.x"],[]],)"
      R"(["CacheRead",["b0",["b0"]],[0,"shared"],["b10"]],)"
      R"(["ComputeAt",["b10","l9"],[true,-1],[]],)"
      R"(["SampleCategorical",[],[[1,2,3,4],[0.25,0.25,0.25,0.25]],["v11"]],)"
      R"(["Annotate",["b10","v11"],["meta_schedule.cooperative_fetch"],[]],)"
      R"(["EnterPostproc",[],[],[]]],)"
      R"([[4,[8,8]],[11,1]]])";
  Trace t = trace_from_json(sketch);
  EXPECT_EQ(t.size(), 14u);
  EXPECT_EQ(t[2].inputs[1], Arg(std::string("SSSRRSRS")));
  EXPECT_EQ(t[9].inputs[1], Arg(Arg::List{Arg(RandomVar{RVType::kBlock, 0})}));
  EXPECT_EQ(t.decision(4), Arg::int_list({8, 8}));
  EXPECT_EQ(trace_to_json(t), sketch);
  EXPECT_TRUE(trace_from_json(trace_to_json(t)) == t);
}

TEST(TraceJson, MalformedInputIsAUserErrorNamingTheInstruction) {
  struct Bad {
    std::string json;
    std::string message;
  };
  std::vector<Bad> cases = {
      {"[[", "trace JSON"},
      {R"({"a": 1})", "expected [instructions, decisions]"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b7"],[],["l1"]]],[]])", "instruction 1"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["Frobnicate",[],[],[]]],[]])", "instruction 1: unknown"},
      {R"([[["GetBlock",[],["C","main"]]],[]])", "instruction 0: expected [kind, inputs, attrs, outputs]"},
      {R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["b0"]]],[]])", "defined twice"},
      {R"([[["GetBlock",[],["C","main"],["b0"]]],[[3,1]]])", "instruction 3"},
      {R"([[["GetBlock",[],["C","main"],["x0"]]],[]])", "not a random variable name"},
  };
  for (const Bad& c : cases) {
    try {
      trace_from_json(c.json);
      ADD_FAILURE() << "accepted " << c.json;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.json << " -> " << e.what();
    }
  }
  // Well-formed JSON whose instruction is malformed fails at replay, naming the index.
  Trace t = trace_from_json(R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[3],["l1"]]],[]])");
  Schedule sch(workload("matmul:m=4,n=4,k=4"));
  try {
    t.apply_to(sch);
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("instruction 1 (GetLoops)"), std::string::npos) << e.what();
  }
  // A well-formed instruction whose precondition fails (no intrinsic named "intrin") is a
  // ScheduleError, not a UserError: search skips such candidates.
  Trace later = trace_from_json(R"([[["GetBlock",[],["C","main"],["b0"]],["Tensorize",["b0"],["intrin",true],[]]],[]])");
  EXPECT_THROW(later.apply_to(sch), ScheduleError);
}

TEST(Trace, WithDecisionReplaysTheNewTiling) {
  ir::PrimFunc func = workload("matmul:m=16,n=8,k=8");
  Schedule sch = sketch(func);
  Trace changed = sch.trace().with_decision(2, Arg::int_list({2, 8}));
  // Truncated at EnterPostproc.
  EXPECT_EQ(changed.size(), 7u);
  Schedule again = replay(changed, func);
  std::string text = ir::print_function(again.func());
  EXPECT_TRUE(has_line(text, "for i0_0 in 2 {")) << text;
  EXPECT_TRUE(has_line(text, "for i0_1 in 8 {")) << text;
  EXPECT_TRUE(same_outputs(func, again.func()));
  EXPECT_EQ(again.trace().decision(2), Arg::int_list({2, 8}));
}

TEST(Trace, PerfectTileRepair) {
  EXPECT_EQ(repair_perfect_tile({4, 4}, 16), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(repair_perfect_tile({4, 4}, 12), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(repair_perfect_tile({3, 5, 4}, 16), (std::vector<int64_t>{1, 4, 4}));
  EXPECT_EQ(repair_perfect_tile({1, 1, 7}, 12), (std::vector<int64_t>{1, 1, 12}));
  EXPECT_EQ(repair_perfect_tile({9, 0, -2}, 6), (std::vector<int64_t>{1, 1, 6}));
  EXPECT_EQ(repair_perfect_tile({5}, 6), (std::vector<int64_t>{6}));
  // A decision recorded on one extent replays on another, repaired.
  Schedule sch = sketch(workload("matmul:m=16,n=8,k=8"));
  Schedule other = replay(sch.trace(), workload("matmul:m=12,n=8,k=8"));
  EXPECT_EQ(other.trace().decision(2), Arg::int_list({3, 4}));
  EXPECT_TRUE(has_line(ir::print_function(other.func()), "for i0_0 in 3 {"));
  // Mutated decisions that are not tilings at all are repaired the same way.
  Trace mutated = sch.trace().with_decision(2, Arg::int_list({5, 3}));
  Schedule repaired = replay(mutated, sch.original());
  EXPECT_EQ(repaired.trace().decision(2), Arg::int_list({1, 16}));
  EXPECT_TRUE(same_outputs(sch.original(), repaired.func()));
}

TEST(Trace, DecisionProviderOverridesAndResamples) {
  ir::PrimFunc func = workload("matmul:m=16,n=8,k=8");
  Schedule sch = sketch(func);
  Schedule again(func);
  sch.trace().apply_to(again, false, [](size_t index, const Instruction& inst, const std::optional<Arg>& recorded) {
    if (inst.kind == InstructionKind::SampleCategorical) return std::optional<Arg>(Arg(int64_t{3}));
    return recorded;
  });
  EXPECT_EQ(again.trace().decision(5), Arg(int64_t{3}));
  EXPECT_EQ(again.get(again.get_block("C"))->annotations.at("meta_schedule.cooperative_fetch"),
            ir::AnnotationValue(int64_t{4}));
}

TEST(Trace, SimplifiedDropsUnusedPureInstructions) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  BlockRV c = sch.get_block("C");
  sch.get_loops(c);                                  // unused
  sch.sample_categorical({1, 2}, {0.5, 0.5}, int64_t{0});  // unused
  std::vector<LoopRV> loops = sch.get_loops(c);
  sch.split(loops[1], {None{}, int64_t{2}});
  sch.get_block("C");                                // unused
  sch.enter_postproc();
  sch.parallel(loops[0]);
  Trace s = sch.trace().simplified();
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].kind, InstructionKind::GetBlock);
  EXPECT_EQ(s[1].kind, InstructionKind::GetLoops);
  EXPECT_EQ(s[2].kind, InstructionKind::Split);
  EXPECT_EQ(s[3].kind, InstructionKind::EnterPostproc);
  EXPECT_TRUE(s.decisions().empty());
  EXPECT_EQ(sch.trace().simplified(/*remove_postproc=*/true).size(), 3u);
  Schedule again = replay(s, sch.original());
  EXPECT_TRUE(ir::structural_equal(again.func(), sch.func()));
  // Names are renumbered in JSON: b0, l1.. with no gaps.
  EXPECT_TRUE(trace_to_json(s).starts_with(
      R"([[["GetBlock",[],["C","main"],["b0"]],["GetLoops",["b0"],[],["l1","l2","l3"]],["Split",["l2","None",2])"))
      << trace_to_json(s);
}

TEST(Schedule, CopyIsIndependentAndFailuresLeaveNoTrace) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
  Schedule fork = sch.copy();
  fork.split(loops[0], {None{}, int64_t{4}});
  EXPECT_TRUE(sch.func().same_as(sch.original()));
  EXPECT_EQ(sch.trace().size(), 2u);
  EXPECT_EQ(fork.trace().size(), 3u);
  EXPECT_TRUE(sch.is_valid(loops[0]));
  EXPECT_FALSE(fork.is_valid(loops[0]));
  // A copy continues the same random stream until reseeded.
  Schedule twin = sch.copy();
  EXPECT_EQ(twin.fork_seed(), sch.fork_seed());
  twin.seed(sch.fork_seed());
  EXPECT_NE(twin.rng().state(), sch.rng().state());
}

TEST(RandomEngine, LehmerSequenceAndSeeds) {
  RandomEngine rng(1);
  EXPECT_EQ(rng.next(), 48271);
  EXPECT_EQ(rng.next(), 182605794);
  EXPECT_EQ(rng.next(), 1291394886);
  EXPECT_EQ(RandomEngine(0).state(), 1);
  EXPECT_EQ(RandomEngine(RandomEngine::kModulus).state(), 1);
  EXPECT_EQ(RandomEngine(-1).state(), RandomEngine::kModulus - 1);
  RandomEngine a(42), b(42);
  for (int i = 0; i < 100; ++i) {
    int64_t x = a.uniform_int(3, 10);
    EXPECT_EQ(x, b.uniform_int(3, 10));
    EXPECT_GE(x, 3);
    EXPECT_LT(x, 10);
  }
  std::vector<int> counts(3);
  for (int i = 0; i < 3000; ++i) counts[a.categorical({1.0, 0.0, 3.0})]++;
  EXPECT_EQ(counts[1], 0);
  EXPECT_GT(counts[2], 2 * counts[0]);
  EXPECT_GT(counts[0], 500);
  std::vector<int64_t> s = a.sample_without_replacement(10, 4);
  std::sort(s.begin(), s.end());
  EXPECT_EQ(std::unique(s.begin(), s.end()), s.end());
}

TEST(Sampling, PerfectTileIsPerfectAndDeterministic) {
  for (int64_t seed : {1, 2, 3, 99}) {
    Schedule a(workload("matmul:m=48,n=8,k=8"), seed);
    Schedule b(workload("matmul:m=48,n=8,k=8"), seed);
    for (int round = 0; round < 10; ++round) {
      LoopRV la = a.get_loops(a.get_block("C"))[0];
      LoopRV lb = b.get_loops(b.get_block("C"))[0];
      std::vector<ExprRV> fa = a.sample_perfect_tile(la, 4, 4);
      std::vector<ExprRV> fb = b.sample_perfect_tile(lb, 4, 4);
      int64_t product = 1;
      for (size_t i = 0; i < fa.size(); ++i) {
        EXPECT_EQ(a.get(fa[i]), b.get(fb[i]));
        product *= a.get(fa[i]);
      }
      EXPECT_EQ(product, 48);
      EXPECT_LE(a.get(fa.back()), 4);
    }
    EXPECT_TRUE(a.trace() == b.trace());
  }
  Schedule sch(workload("matmul:m=48,n=8,k=8"));
  LoopRV l = sch.get_loops(sch.get_block("C"))[0];
  auto expect = [&](auto call, int k, const std::string& name) {
    try {
      call();
      ADD_FAILURE() << "expected " << name;
    } catch (const ScheduleError& e) {
      EXPECT_EQ(e.precondition(), k);
      EXPECT_EQ(e.error_name(), name);
    }
  };
  expect([&] { sch.sample_perfect_tile(l, 0, 4); }, 1, "InvalidTileCount");
  expect([&] { sch.sample_perfect_tile(l, 2, 0); }, 3, "InvalidMaxInnermost");
  expect([&] { sch.sample_perfect_tile(l, 2, 4, std::vector<int64_t>{48}); }, 4, "WrongDecisionLength");
  expect([&] { sch.sample_categorical({1, 2}, {0.5}); }, 1, "InvalidDistribution");
  expect([&] { sch.sample_categorical({1, 2}, {0.0, 0.0}); }, 1, "InvalidDistribution");
  expect([&] { sch.sample_categorical({1, 2}, {0.5, 0.5}, int64_t{2}); }, 2, "InvalidDecision");
}

}  // namespace
}  // namespace dragon::schedule
