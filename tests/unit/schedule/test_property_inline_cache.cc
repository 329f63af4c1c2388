// Property test for the inlining and caching primitives: random sequences of
// compute_inline, reverse_compute_inline, cache_read, cache_write and set_scope (with
// a few splits) on random blocks of op kinds with several stages. Failed primitives must
// leave the schedule as it was; the result must compute, byte for byte, what the
// unscheduled function does, and its trace must replay exactly.
#include <gtest/gtest.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::replays_exactly;
using testing::same_outputs;
using testing::workload;

const char* const kScopes[] = {"shared", "local", "global", "shared.dyn"};

// One random primitive; returns which (0..6) applied, or -1.
int random_step(Schedule& sch, RandomEngine& rng) {
  std::vector<BlockRV> blocks = sch.get_child_blocks(sch.get_block("root"));
  if (blocks.empty()) return -1;
  BlockRV block = blocks[rng.uniform_int(0, static_cast<int64_t>(blocks.size()))];
  const ir::BlockNode* node = sch.get(block);
  const int64_t reads = static_cast<int64_t>(node->reads.size());
  const int64_t writes = static_cast<int64_t>(node->writes.size());
  const std::string scope = kScopes[rng.uniform_int(0, 4)];
  const ir::PrimFunc before = sch.func();
  const size_t trace_size = sch.trace().size();
  const int kind = static_cast<int>(rng.uniform_int(0, 7));
  try {
    switch (kind) {
      case 0:
      case 1: sch.compute_inline(block); break;
      case 2: sch.reverse_compute_inline(block); break;
      case 3: sch.cache_read(block, rng.uniform_int(0, reads + 1), scope); break;
      case 4: sch.cache_write(block, rng.uniform_int(0, writes + 1), scope); break;
      case 5: sch.set_scope(block, rng.uniform_int(0, writes + 1), scope); break;
      default: {
        std::vector<LoopRV> loops = sch.get_loops(block);
        if (loops.empty()) return -1;
        sch.split(loops[rng.uniform_int(0, static_cast<int64_t>(loops.size()))], {None{}, int64_t{3}});
        break;
      }
    }
    return kind;
  } catch (const ScheduleError&) {
    EXPECT_TRUE(sch.func().same_as(before)) << "a failed primitive changed the function";
    EXPECT_EQ(sch.trace().size(), trace_size) << "a failed primitive was recorded";
    return -1;
  }
}

TEST(InlineCacheProperty, RandomTracesPreserveSemanticsAndReplay) {
  const std::vector<std::string> specs = {
      "softmax:shape=4x8",
      "log_softmax:shape=3x10",
      "layer_norm:shape=2x4x8,normalized_dims=1",
      "conv2d:batch=1,in_channels=2,out_channels=2,size=5x5,kernel=3x3,padding=1x1",
      "matmul:m=6,n=5,k=4",
      "matmul_bias_act:m=4,n=6,k=5,activation=gelu",
      "batch_norm:shape=2x3x4x4",
      "avg_pool2d:batch=1,channels=2,height=6,width=6,kernel=3,stride=2,padding=1",
      "add_rms_norm",
      "cross_entropy_loss",
      "jagged_to_dense",
  };
  RandomEngine rng(2024);
  std::vector<int> applied(7, 0);
  for (const std::string& spec : specs) {
    ir::PrimFunc func;
    try {
      func = workload(spec);
    } catch (const std::exception& e) {
      ADD_FAILURE() << spec << ": " << e.what();
      continue;
    }
    for (int trial = 0; trial < 6; ++trial) {
      Schedule sch(func, rng.fork_seed());
      for (int step = 0; step < 6; ++step) {
        int kind = random_step(sch, rng);
        if (kind >= 0) ++applied[kind];
      }
      EXPECT_TRUE(same_outputs(sch.original(), sch.func())) << spec << "\n" << sch.trace().to_string();
      EXPECT_TRUE(replays_exactly(sch)) << spec;
    }
  }
  // compute_inline (0, 1), reverse_compute_inline, cache_read, cache_write, set_scope.
  EXPECT_GE(applied[0] + applied[1], 10);
  EXPECT_GE(applied[2], 1);  // rarely legal: needs a complete single producer
  for (int kind = 3; kind <= 5; ++kind) EXPECT_GE(applied[kind], 5) << "kind " << kind;
}

}  // namespace
}  // namespace dragon::schedule
