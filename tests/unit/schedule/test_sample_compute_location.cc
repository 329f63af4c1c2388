// sample_compute_location: the candidates (inline, root, the consumer's loops where
// compute_at succeeds, TVM's data-parallel cut), uniform sampling, the repair of replayed
// decisions, compute_at and reverse_compute_at with the root and inline marks, TVM's JSON
// layout, and the marks refused by other primitives.
#include <gtest/gtest.h>

#include <map>

#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::has_line;
using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

constexpr const char* kChain = R"(func chain(in A: f32[5, 6], out C: f32[5, 6]) {
  block root {
    alloc B: f32[5, 6]
    for i0 in 5 {
      for i1 in 6 {
        block B [vi0: S 5 = i0, vi1: S 6 = i1] {
          reads A[vi0, vi1]
          writes B[vi0, vi1]
          B[vi0, vi1] = A[vi0, vi1] * 2f32
        }
      }
    }
    for i0 in 5 {
      for i1 in 6 {
        block C [vi0: S 5 = i0, vi1: S 6 = i1] {
          reads B[vi0, vi1]
          writes C[vi0, vi1]
          C[vi0, vi1] = B[vi0, vi1] + 1f32
        }
      }
    }
  }
}
)";

// B read by two loop nests (C and D).
constexpr const char* kFork = R"(func fork(in A: f32[4, 3], out C: f32[4, 3], out D: f32[4, 3]) {
  block root {
    alloc B: f32[4, 3]
    for i0 in 4 {
      for i1 in 3 {
        block B [vi0: S 4 = i0, vi1: S 3 = i1] {
          reads A[vi0, vi1]
          writes B[vi0, vi1]
          B[vi0, vi1] = A[vi0, vi1] * 2f32
        }
      }
    }
    for i0 in 4 {
      for i1 in 3 {
        block C [vi0: S 4 = i0, vi1: S 3 = i1] {
          reads B[vi0, vi1]
          writes C[vi0, vi1]
          C[vi0, vi1] = B[vi0, vi1] + 1f32
        }
      }
    }
    for i0 in 4 {
      for i1 in 3 {
        block D [vi0: S 4 = i0, vi1: S 3 = i1] {
          reads B[vi0, vi1]
          writes D[vi0, vi1]
          D[vi0, vi1] = B[vi0, vi1] * 3f32
        }
      }
    }
  }
}
)";

// The decision recorded for the last instruction of the trace.
int64_t last_decision(const Schedule& sch) {
  const Trace& trace = sch.trace();
  std::optional<Arg> d = trace.decision(trace.size() - 1);
  EXPECT_TRUE(d.has_value());
  const int64_t* value = d ? d->as<int64_t>() : nullptr;
  EXPECT_NE(value, nullptr);
  return value != nullptr ? *value : -100;
}

TEST(SampleComputeLocation, CandidatesAreSampledUniformly) {
  // B can be inlined (-2), stay (-1), or go under C's i0 (0) or i1 (1).
  ir::PrimFunc func = ir::parse_function(kChain);
  std::map<int64_t, int> seen;
  for (int seed = 1; seed <= 400; ++seed) {
    Schedule sch(func, seed);
    sch.sample_compute_location(sch.get_block("B"));
    ++seen[last_decision(sch)];
  }
  ASSERT_EQ(seen.size(), 4u);
  for (int64_t d : {-2, -1, 0, 1}) {
    EXPECT_GT(seen[d], 60) << d;  // 100 expected of each
    EXPECT_LT(seen[d], 140) << d;
  }
}

TEST(SampleComputeLocation, EachDecisionDrivesComputeAt) {
  ir::PrimFunc func = ir::parse_function(kChain);
  for (int64_t decision : {-2, -1, 0, 1}) {
    SCOPED_TRACE(decision);
    Schedule sch(func);
    BlockRV b = sch.get_block("B");
    LoopRV at = sch.sample_compute_location(b, decision);
    EXPECT_EQ(last_decision(sch), decision);
    EXPECT_EQ(sch.is_valid(at), decision >= 0);  // the marks stand for no loop
    sch.compute_at(b, at, /*preserve_unit_loops=*/true, -1);
    const std::string text = ir::print_function(sch.func());
    switch (decision) {
      case -2:  // inlined into C
        EXPECT_TRUE(has_line(text, "C[vi0, vi1] = A[vi0, vi1] * 2f32 + 1f32")) << text;
        EXPECT_FALSE(sch.is_valid(b));
        break;
      case -1:  // root: nothing moves, the instruction is still recorded
        EXPECT_TRUE(sch.func().same_as(func));
        EXPECT_EQ(sch.trace().size(), 3u);
        break;
      case 0:
        EXPECT_TRUE(has_line(text, "block B [vi0: S 5 = i0, vi1: S 6 = ax1]")) << text;
        break;
      default:
        EXPECT_TRUE(has_line(text, "block B [vi0: S 5 = i0, vi1: S 6 = i1]")) << text;
        break;
    }
    EXPECT_TRUE(same_outputs(func, sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(SampleComputeLocation, ReplayedDecisionsAreRepaired) {
  ir::PrimFunc func = ir::parse_function(kChain);
  // After fusing C's loops only position 0 is left: 1 and 7 become 0.
  for (int64_t decision : {1, 7}) {
    Schedule sch(func);
    std::vector<LoopRV> loops = sch.get_loops(sch.get_block("C"));
    sch.fuse(loops);
    sch.sample_compute_location(sch.get_block("B"), decision);
    EXPECT_EQ(last_decision(sch), 0) << decision;
  }
  // Below every candidate: root.
  Schedule low(func);
  low.sample_compute_location(low.get_block("B"), -9);
  EXPECT_EQ(last_decision(low), -1);
  // Inline (-2) where inlining is refused (matmul's C writes an output parameter)
  // becomes root.
  Schedule out(workload("matmul:m=4,n=4,k=4"));
  out.sample_compute_location(out.get_block("C"), -2);
  EXPECT_EQ(last_decision(out), -1);
}

TEST(SampleComputeLocation, DataParallelCutAndFailingLoops) {
  // A shared copy of matmul's A: C's loops i, j (data parallel) and k (reduce, after the
  // last data-parallel loop: cut). Every candidate is a location compute_at accepts.
  Schedule sch(workload("matmul:m=6,n=5,k=4"));
  BlockRV c = sch.get_block("C");
  BlockRV a = sch.cache_read(c, 0, "shared", {c});
  std::map<int64_t, int> seen;
  for (int seed = 1; seed <= 60; ++seed) {
    Schedule trial = sch.copy();
    trial.seed(seed);
    LoopRV at = trial.sample_compute_location(a);
    ++seen[last_decision(trial)];
    trial.compute_at(a, at, false, -1);
    EXPECT_TRUE(same_outputs(trial.original(), trial.func()));
  }
  EXPECT_EQ(seen.count(2), 0u);  // the reduce loop k
  EXPECT_GT(seen[-1], 0);
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
  // A block read by two loop nests: no loop holds both readers, so root or inline only.
  Schedule fork(ir::parse_function(kFork));
  for (int seed = 1; seed <= 20; ++seed) {
    Schedule trial = fork.copy();
    trial.seed(seed);
    trial.sample_compute_location(trial.get_block("B"));
    EXPECT_LT(last_decision(trial), 0);
  }
}

TEST(SampleComputeLocation, ReverseComputeAtTakesTheMarks) {
  ir::PrimFunc func = ir::parse_function(kChain);
  {
    Schedule sch(func);
    LoopRV root = sch.sample_compute_location(sch.get_block("B"), -1);
    sch.reverse_compute_at(sch.get_block("C"), root);
    EXPECT_TRUE(sch.func().same_as(func));
    EXPECT_TRUE(replays_exactly(sch));
  }
  {
    // The inline mark makes reverse_compute_at a reverse_compute_inline of C into B.
    Schedule sch(func);
    LoopRV inline_mark = sch.sample_compute_location(sch.get_block("B"), -2);
    sch.reverse_compute_at(sch.get_block("C"), inline_mark);
    const std::string text = ir::print_function(sch.func());
    EXPECT_TRUE(has_line(text, "C[vi0, vi1] = A[vi0, vi1] * 2f32 + 1f32")) << text;
    EXPECT_TRUE(same_outputs(func, sch.func()));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

TEST(SampleComputeLocation, OtherPrimitivesRefuseTheMarks) {
  Schedule sch(ir::parse_function(kChain));
  LoopRV root = sch.sample_compute_location(sch.get_block("B"), -1);
  const ir::PrimFunc before = sch.func();
  try {
    sch.split(root, {None{}, int64_t{2}});
    ADD_FAILURE() << "split took the root mark";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::Split);
    EXPECT_EQ(e.precondition(), 0);
    EXPECT_NE(std::string(e.what()).find("root mark"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sch.func().same_as(before));
  // The inline mark makes compute_at a compute_inline, with its preconditions: C writes
  // the output parameter, so it cannot be inlined, and nothing changes.
  LoopRV inline_mark = sch.sample_compute_location(sch.get_block("B"), -2);
  const size_t trace_size = sch.trace().size();
  try {
    sch.compute_at(sch.get_block("C"), inline_mark);
    ADD_FAILURE() << "an output block was inlined";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::ComputeInline);
    EXPECT_EQ(e.error_name(), "OutputBlock");
  }
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace_size + 1);  // the get_block only
  // compute_at at the root mark changes nothing, even for a block that could not move.
  Schedule mm(workload("matmul:m=4,n=4,k=4"));
  BlockRV c = mm.get_block("C");
  LoopRV stay = mm.sample_compute_location(c, -1);
  const ir::PrimFunc unmoved = mm.func();
  EXPECT_NO_THROW(mm.compute_at(c, stay));
  EXPECT_TRUE(mm.func().same_as(unmoved));
  // An unknown block: precondition 0.
  try {
    mm.sample_compute_location(BlockRV{999});
    ADD_FAILURE() << "an unknown block was sampled";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::SampleComputeLocation);
    EXPECT_EQ(e.precondition(), 0);
  }
}

TEST(SampleComputeLocation, TvmJsonLayout) {
  // TVM: ["SampleComputeLocation", [block], [], [loop]] with the index as decision.
  const char* json = R"([[["GetBlock",[],["B","main"],["b0"]],)"
                     R"(["SampleComputeLocation",["b0"],[],["l1"]],)"
                     R"(["ComputeAt",["b0","l1"],[true,-1],[]]],)"
                     R"([[1,1]]])";
  ir::PrimFunc func = ir::parse_function(kChain);
  Schedule sch = replay(trace_from_json(json), func);
  EXPECT_EQ(trace_to_json(sch.trace()), json);
  EXPECT_TRUE(has_line(ir::print_function(sch.func()), "block B [vi0: S 5 = i0, vi1: S 6 = i1]"));
  EXPECT_TRUE(same_outputs(func, sch.func()));
  EXPECT_TRUE(replays_exactly(sch));
  // Without the decision, replay samples anew: some candidate, and the trace records it.
  const char* undecided = R"([[["GetBlock",[],["B","main"],["b0"]],)"
                          R"(["SampleComputeLocation",["b0"],[],["l1"]],)"
                          R"(["ComputeAt",["b0","l1"],[true,-1],[]]],[]])";
  Schedule fresh = replay(trace_from_json(undecided), func, 5);
  EXPECT_TRUE(fresh.trace().decision(1).has_value());
  EXPECT_TRUE(same_outputs(func, fresh.func()));
}

}  // namespace
}  // namespace dragon::schedule
