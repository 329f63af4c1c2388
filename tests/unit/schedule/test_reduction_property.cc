// Property test for the reduction primitives: random traces mixing split and reorder
// with rfactor, decompose_reduction and blockize on random blocks and loops, over every registered
// op kind at its default shape. A failed primitive must change nothing; every scheduled
// function must compute what the original does (bit for bit unless a reorder or an
// rfactor reassociated a reduction) and replay from its trace.
#include <gtest/gtest.h>

#include <algorithm>

#include "dragon/ir/op.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/trace_json.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::replays_exactly;
using testing::same_outputs;

struct ReductionTrace {
  Schedule sch;
  bool reassociated = false;
  int rfactors = 0;
  int decompositions = 0;
  int blockizes = 0;
};

void random_reduction_step(ReductionTrace& t, RandomEngine& rng) {
  Schedule& sch = t.sch;
  std::vector<BlockRV> blocks = sch.get_child_blocks(sch.get_block("root"));
  if (blocks.empty()) return;
  BlockRV block = blocks[rng.uniform_int(0, static_cast<int64_t>(blocks.size()))];
  std::vector<LoopRV> loops = sch.get_loops(block);
  if (loops.empty()) return;
  const int64_t n = static_cast<int64_t>(loops.size());
  LoopRV loop = loops[rng.uniform_int(0, n)];
  const ir::PrimFunc before = sch.func();
  const size_t trace_size = sch.trace().size();
  try {
    switch (rng.uniform_int(0, 7)) {
      case 0: {  // split, perhaps non-divisible
        sch.split(loop, {None{}, rng.uniform_int(2, 6)});
        break;
      }
      case 1: {  // swap two loops
        if (n < 2) break;
        int64_t a = rng.uniform_int(0, n - 1);
        sch.reorder({loops[a + 1], loops[a]});
        t.reassociated = true;
        break;
      }
      case 2:
      case 3: {
        sch.rfactor(loop, rng.uniform_int(-2, 3));
        t.reassociated = true;
        ++t.rfactors;
        break;
      }
      case 6: {
        sch.blockize(loop, rng.uniform_int(0, 2) == 1);
        ++t.blockizes;
        break;
      }
      default: {
        sch.decompose_reduction(block, loop);
        ++t.decompositions;
        break;
      }
    }
  } catch (const ScheduleError& e) {
    EXPECT_TRUE(sch.func().same_as(before)) << e.what();
    EXPECT_EQ(sch.trace().size(), trace_size) << e.what();
  }
}

TEST(ReductionProperty, RandomTracesPreserveSemanticsAndReplay) {
  const int kTracesPerOp = 3;
  const int kStepsPerTrace = 8;
  int rfactors = 0, decompositions = 0, blockizes = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    for (int trace = 0; trace < kTracesPerOp; ++trace) {
      RandomEngine rng(4000 + 1000 * trace + static_cast<int64_t>(op.name.size()) * 13 + op.name[0]);
      ReductionTrace t{Schedule(func, rng.fork_seed())};
      for (int step = 0; step < kStepsPerTrace; ++step) random_reduction_step(t, rng);
      rfactors += t.rfactors;
      decompositions += t.decompositions;
      blockizes += t.blockizes;
      SCOPED_TRACE(op.name + " trace " + std::to_string(trace) + ":\n" + t.sch.trace().to_string());
      EXPECT_TRUE(same_outputs(func, t.sch.func(), 17 + trace, /*exact=*/!t.reassociated));
      EXPECT_TRUE(replays_exactly(t.sch));
    }
  }
  // The generator must exercise both primitives, not fail every time.
  EXPECT_GT(rfactors, 10);
  EXPECT_GT(decompositions, 10);
  EXPECT_GT(blockizes, 10);
}

// split + decompose_reduction and split + rfactor on the named reductions, by recipe:
// split the innermost reduce loop by 3 (rarely divisible), rfactor its inner part, then
// decompose both the rfactor block and the write-back at their outermost loop.
TEST(ReductionProperty, SplitRFactorDecomposeRecipe) {
  for (const char* spec : {"matmul:m=10,n=7,k=11", "conv2d:batch=1,in_channels=2,out_channels=3,size=7x7,kernel=3x3",
                           "softmax:shape=5x17", "layer_norm:shape=3x4x10", "sum:shape=3x10x4", "max:shape=4x7x3"}) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    Schedule sch(func);
    int done = 0;
    for (BlockRV block : sch.get_child_blocks(sch.get_block("root"))) {
      if (sch.get(block)->init.defined() == false) continue;
      std::vector<LoopRV> loops = sch.get_loops(block);
      std::vector<LoopRV> parts = sch.split(loops.back(), {None{}, int64_t{3}});
      BlockRV rf = sch.rfactor(parts[1], 0);
      sch.decompose_reduction(rf, sch.get_loops(rf)[0]);
      sch.decompose_reduction(block, sch.get_loops(block)[0]);
      ++done;
    }
    SCOPED_TRACE(std::string(spec) + ":\n" + sch.trace().to_string());
    EXPECT_GT(done, 0);
    EXPECT_TRUE(same_outputs(func, sch.func(), 5, /*exact=*/false));
    EXPECT_TRUE(replays_exactly(sch));
  }
}

// The three kinds as TVM writes them in JSON: DecomposeReduction(b, l) -> b,
// RFactor(l | factor_axis) -> b, Blockize(l | preserve_unit_iters) -> b.
TEST(ReductionProperty, TvmJsonLayoutReplays) {
  ir::PrimFunc func = ops::OpRegistry::global().make_workload("matmul:m=8,n=4,k=8").func;
  const char* json = R"([[["GetBlock",[],["C","main"],["b0"]],)"
                     R"(["GetLoops",["b0"],[],["l1","l2","l3"]],)"
                     R"(["Split",["l3",null,4],[true,false],["l4","l5"]],)"
                     R"(["RFactor",["l5"],[1],["b6"]],)"
                     R"(["GetLoops",["b6"],[],["l7","l8","l9","l10"]],)"
                     R"(["DecomposeReduction",["b6","l9"],[],["b11"]],)"
                     R"(["GetLoops",["b0"],[],["l12","l13","l14"]],)"
                     R"(["Blockize",["l13"],[true],["b15"]]],[]])";
  Trace trace = trace_from_json(json);
  Schedule sch = replay(trace, func);
  EXPECT_EQ(trace_to_json(sch.trace()), trace_to_json(trace));
  EXPECT_EQ(sch.get(BlockRV{6})->name, "C_rf");
  EXPECT_EQ(sch.get(BlockRV{11})->name, "C_rf_init");
  EXPECT_EQ(sch.get(BlockRV{15})->name, "C_o");
  EXPECT_TRUE(same_outputs(func, sch.func(), 3, /*exact=*/false));
  EXPECT_TRUE(replays_exactly(sch));
}

}  // namespace
}  // namespace dragon::schedule
