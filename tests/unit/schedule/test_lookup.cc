// Lookup primitives: get_block, get_loops, get_child_blocks, get_producers, get_consumers,
// get_output_blocks.
#include <gtest/gtest.h>

#include "dragon/ir/printer.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using testing::workload;

TEST(Lookup, GetBlockAndLoopsOfMatmul) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  BlockRV c = sch.get_block("C");
  EXPECT_EQ(sch.get(c)->name, "C");
  std::vector<LoopRV> loops = sch.get_loops(c);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(sch.get(loops[0])->loop_var.name(), "i0");
  EXPECT_EQ(sch.get(loops[1])->loop_var.name(), "i1");
  EXPECT_EQ(sch.get(loops[2])->loop_var.name(), "r0");
  // Ids follow one counter: b0, l1, l2, l3.
  EXPECT_EQ(rv_name(c), "b0");
  EXPECT_EQ(rv_name(loops[2]), "l3");
  EXPECT_EQ(sch.trace().size(), 2u);
}

TEST(Lookup, GetBlockOfMissingNameFails) {
  Schedule sch(workload("matmul:m=8,n=8,k=8"));
  try {
    sch.get_block("D");
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::GetBlock);
    EXPECT_EQ(e.precondition(), 1);
    EXPECT_EQ(e.error_name(), "BlockNotFound");
    EXPECT_NE(std::string(e.what()).find("\"D\""), std::string::npos) << e.what();
  }
  EXPECT_EQ(sch.trace().size(), 0u);
}

TEST(Lookup, ChildBlocksProducersConsumersOfSoftmax) {
  Schedule sch(workload("softmax:shape=4x16"));
  BlockRV root = sch.get_block("root");
  std::vector<BlockRV> children = sch.get_child_blocks(root);
  std::vector<std::string> names;
  for (BlockRV b : children) names.push_back(sch.get(b)->name);
  EXPECT_EQ(names, (std::vector<std::string>{"x_max", "x_exp", "exp_sum", "softmax"}));

  auto names_of = [&](const std::vector<BlockRV>& blocks) {
    std::vector<std::string> out;
    for (BlockRV b : blocks) out.push_back(sch.get(b)->name);
    return out;
  };
  BlockRV exp_sum = sch.get_block("exp_sum");
  EXPECT_EQ(names_of(sch.get_producers(exp_sum)), (std::vector<std::string>{"x_exp"}));
  EXPECT_EQ(names_of(sch.get_consumers(exp_sum)), (std::vector<std::string>{"softmax"}));
  BlockRV x_exp = sch.get_block("x_exp");
  EXPECT_EQ(names_of(sch.get_producers(x_exp)), (std::vector<std::string>{"x_max"}));
  EXPECT_EQ(names_of(sch.get_consumers(x_exp)), (std::vector<std::string>{"exp_sum", "softmax"}));
  // The loop form lists the blocks under one loop nest.
  std::vector<LoopRV> loops = sch.get_loops(exp_sum);
  EXPECT_EQ(names_of(sch.get_child_blocks(loops[0])), (std::vector<std::string>{"exp_sum"}));
}

std::vector<std::string> names_of(const Schedule& sch, const std::vector<BlockRV>& blocks) {
  std::vector<std::string> out;
  for (BlockRV b : blocks) out.push_back(sch.get(b)->name);
  return out;
}

TEST(Lookup, OutputBlocksWriteWhatTheirScopeDoesNotAllocate) {
  Schedule softmax(workload("softmax:shape=4x16"));
  const BlockRV root = softmax.get_block("root");
  EXPECT_EQ(names_of(softmax, softmax.get_output_blocks(root)), (std::vector<std::string>{"softmax"}));
  // Recorded as TVM records it: the scope block in, one output per block found.
  const Instruction& recorded = softmax.trace().instructions().back();
  EXPECT_EQ(recorded.kind, InstructionKind::GetOutputBlocks);
  EXPECT_EQ(to_string(recorded), "b1 = GetOutputBlocks(b0)");
  EXPECT_TRUE(testing::replays_exactly(softmax));

  // After cache_write, the copy back (C_local) writes the output, not C; C's tile, once
  // blockized, holds C writing a buffer that the outer block C_o does not allocate.
  Schedule matmul(workload("matmul:m=8,n=8,k=8"));
  const BlockRV c = matmul.get_block("C");
  matmul.cache_write(c, 0, "local");
  const BlockRV matmul_root = matmul.get_block("root");
  EXPECT_EQ(names_of(matmul, matmul.get_output_blocks(matmul_root)), (std::vector<std::string>{"C_local"}));
  const BlockRV outer = matmul.blockize(matmul.get_loops(matmul.get_block("C_local"))[1]);
  EXPECT_EQ(names_of(matmul, matmul.get_output_blocks(matmul_root)), (std::vector<std::string>{"C_local_o", "C_local"}));
  EXPECT_EQ(names_of(matmul, matmul.get_output_blocks(outer)), (std::vector<std::string>{"C_local"}));
  EXPECT_TRUE(matmul.get_output_blocks(c).empty());  // a leaf holds no block
  EXPECT_TRUE(testing::replays_exactly(matmul));
}

TEST(Lookup, OutputBlocksDriveASchedule) {
  // A schedule that finds its stage by get_output_blocks instead of a name: tiles and
  // unrolls the output of layer_norm; the interpreter's outputs stay byte-identical.
  const ir::PrimFunc func = workload("layer_norm:shape=3x4x10");
  Schedule sch(func);
  const std::vector<BlockRV> outputs = sch.get_output_blocks(sch.get_block("root"));
  ASSERT_EQ(outputs.size(), 1u);
  const std::vector<LoopRV> loops = sch.get_loops(outputs[0]);
  const std::vector<LoopRV> tiles = sch.split(loops.back(), {None{}, int64_t{4}});
  sch.unroll(tiles[1]);
  EXPECT_FALSE(sch.func().same_as(func));
  EXPECT_TRUE(testing::same_outputs(func, sch.func(), 11));
  EXPECT_TRUE(testing::replays_exactly(sch));
  // Replayed on the unscheduled function, the lookup finds the same block again.
  EXPECT_TRUE(testing::same_outputs(func, replay(sch.trace(), func).func(), 12));
}

TEST(Lookup, OutputBlocksOfAnInvalidatedBlockFail) {
  Schedule sch(workload("softmax:shape=4x8"));
  const BlockRV b = sch.get_block("x_exp");
  sch.compute_inline(b);
  const ir::PrimFunc before = sch.func();
  const size_t trace_before = sch.trace().size();
  try {
    sch.get_output_blocks(b);
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_EQ(e.kind(), InstructionKind::GetOutputBlocks);
    EXPECT_EQ(e.precondition(), 0);
    EXPECT_NE(std::string(e.what()).find("scope_block"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace_before);
}

}  // namespace
}  // namespace dragon::schedule
