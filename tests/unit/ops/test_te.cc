// The TE-like builder: stage structure, iteration kinds, intermediates and scans.
#include <gtest/gtest.h>

#include "dragon/ops/te.h"
#include "op_test_util.h"

namespace dragon::ops {
namespace {

using testing::find_block;

TEST(FunctionBuilder, ReductionMakesSpatialAndReduceIterVarsWithInit) {
  FunctionBuilder fb("mm");
  Tensor a = fb.input("A", DataType::f32(), {4, 8});
  Tensor b = fb.input("B", DataType::f32(), {8, 2});
  Tensor c = fb.reduce("C", {4, 2}, {8}, DataType::f32(), Reducer::sum(),
                       [&](const IndexVars& i, const IndexVars& r) { return a(i[0], r[0]) * b(r[0], i[1]); });
  ir::PrimFunc f = fb.build({c});
  ASSERT_EQ(f->params.size(), 3u);
  EXPECT_EQ(f->params[2].role, ir::ParamRole::kOutput);
  const ir::BlockNode* block = find_block(f->body, "C");
  ASSERT_NE(block, nullptr);
  ASSERT_EQ(block->iter_vars.size(), 3u);
  EXPECT_EQ(block->iter_vars[0].kind, ir::IterKind::kSpatial);
  EXPECT_EQ(block->iter_vars[2].kind, ir::IterKind::kReduce);
  EXPECT_TRUE(block->init.defined());
  EXPECT_EQ(block->reads.size(), 2u);
  EXPECT_EQ(f.root_block()->name, "root");
  EXPECT_TRUE(f.root_block()->alloc_buffers.empty());
}

TEST(FunctionBuilder, IntermediatesAreAllocatedInTheRootBlock) {
  FunctionBuilder fb("two_stage");
  Tensor x = fb.input("X", DataType::f32(), {16});
  Tensor y = fb.compute("Y", {16}, [&](const IndexVars& i) { return x(i[0]) * 2.0; });
  Tensor z = fb.compute("Z", {16}, [&](const IndexVars& i) { return y(i[0]) + 1.0; });
  ir::PrimFunc f = fb.build({z});
  ASSERT_EQ(f.root_block()->alloc_buffers.size(), 1u);
  EXPECT_TRUE(f.root_block()->alloc_buffers[0].same_as(y.buffer()));
}

TEST(FunctionBuilder, ScanAxisIsOrdered) {
  FunctionBuilder fb("cumsum");
  Tensor x = fb.input("X", DataType::f32(), {3, 5});
  Tensor y = fb.scan(
      "Y", {3, 5}, 1, /*reverse=*/true, [&](const IndexVars& i) { return x(i[0], i[1]); },
      [&](const IndexVars& i, Expr previous) { return previous + x(i[0], i[1]); });
  ir::PrimFunc f = fb.build({y});
  const ir::BlockNode* block = find_block(f->body, "Y");
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->iter_vars[1].kind, ir::IterKind::kOrdered);
  EXPECT_FALSE(block->init.defined());
}

TEST(FunctionBuilder, NamesAreMadeUnique) {
  FunctionBuilder fb("f");
  Tensor x = fb.input("X", DataType::f32(), {2});
  Tensor y = fb.compute("X", {2}, [&](const IndexVars& i) { return x(i[0]); });
  EXPECT_EQ(y.name(), "X_1");
}

}  // namespace
}  // namespace dragon::ops
