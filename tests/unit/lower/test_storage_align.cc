// storage_align through lowering: the "buffer_dim_align" block annotations reach
// flatten_buffers (via the function attribute lower_blocks fills), which pads the aligned
// strides and grows the allocation; results are unchanged.
#include <gtest/gtest.h>

#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/passes.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "lower_test_util.h"

namespace dragon::lower {
namespace {

using schedule::Schedule;
using testing::computes_the_same;
using testing::has_exact_line;
using testing::workload;

TEST(StorageAlign, PadsTheAlignedStrideAndGrowsTheAllocation) {
  Schedule sch(workload("softmax:shape=4x10"));
  // x_exp[4, 10]: row stride 10 becomes 19, the smallest >= 10 with 19 % 16 == 3;
  // 1 + 19 * 3 + 9 = 67 elements. x_max[4]: stride 1 becomes 2 (2 % 4 == 2), 7 elements.
  sch.storage_align(sch.get_block("x_exp"), 0, 0, 16, 3);
  sch.storage_align(sch.get_block("x_max"), 0, 0, 4, 2);
  ir::PrimFunc lowered = lower(sch.func(), Target::cpu()).func;
  std::string text = ir::print_function(lowered);
  EXPECT_TRUE(has_exact_line(text, "alloc x_exp: f32[67] {")) << text;
  EXPECT_TRUE(has_exact_line(text, "x_exp[i0 * 19 + i1] = exp(X[i0 * 10 + i1] - x_max[i0 * 2])")) << text;
  EXPECT_TRUE(has_exact_line(text, "alloc x_max: f32[7] {")) << text;
  EXPECT_EQ(lowered->attrs.count("buffer_dim_align"), 0u);  // consumed
  EXPECT_TRUE(computes_the_same(sch.func(), lowered));
}

TEST(StorageAlign, TheAnnotationsTravelOnTheFunctionBetweenLowerBlocksAndFlatten) {
  Schedule sch(workload("softmax:shape=4x10"));
  sch.storage_align(sch.get_block("x_exp"), 0, 0, 16, 3);
  sch.storage_align(sch.get_block("exp_sum"), 0, 0, 4, 1);
  ir::PrimFunc blockless = lower_blocks(lower_reduction_init(sch.func()));
  ASSERT_EQ(blockless->attrs.count("buffer_dim_align"), 1u);
  EXPECT_EQ(std::get<std::string>(blockless->attrs.at("buffer_dim_align")), "exp_sum:0:4:1;x_exp:0:16:3");
}

TEST(StorageAlign, PaddingAParameterIsAUserError) {
  ir::PrimFunc relu = lower_blocks(workload("relu:shape=4x4"));
  ir::Annotations attrs = relu->attrs;
  attrs["buffer_dim_align"] = std::string(relu->params[0].buffer->name + ":0:8:1");
  ir::PrimFunc func = ir::PrimFunc::make(relu->name, relu->params, relu->body, attrs);
  EXPECT_THROW(flatten_buffers(func), UserError);
}

}  // namespace
}  // namespace dragon::lower
