// Lookup primitives: get_block, get_loops, get_child_blocks, get_producers, get_consumers.
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

}  // namespace
}  // namespace dragon::schedule
