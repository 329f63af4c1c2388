// Block read/write region detection.
#include <gtest/gtest.h>

#include "dragon/ir/block_access.h"
#include "dragon/ir/op.h"

namespace dragon::ir {
namespace {

TEST(BlockAccess, MatmulUpdateReadsInputsAtPoints) {
  Buffer a = Buffer::make("A", DataType::f32(), {4, 8});
  Buffer b = Buffer::make("B", DataType::f32(), {8, 2});
  Buffer c = Buffer::make("C", DataType::f32(), {4, 2});
  Var vi("vi"), vj("vj"), vk("vk");
  Expr acc = BufferLoadNode::make(c, {vi, vj});
  Stmt body = BufferStoreNode::make(
      c, acc + BufferLoadNode::make(a, {vi, vk}) * BufferLoadNode::make(b, {vk, vj}), {vi, vj});
  Stmt init = BufferStoreNode::make(c, make_zero(DataType::f32()), {vi, vj});
  BlockAccessRegions regions = detect_block_access_regions(body, init);
  ASSERT_EQ(regions.reads.size(), 2u);  // the update's read of C is implied by init
  EXPECT_TRUE(regions.reads[0].buffer.same_as(a));
  EXPECT_TRUE(regions.reads[0].region[0].min.same_as(vi));
  EXPECT_TRUE(is_const_int(regions.reads[0].region[0].extent, 1));
  ASSERT_EQ(regions.writes.size(), 1u);
  EXPECT_TRUE(regions.writes[0].buffer.same_as(c));
}

TEST(BlockAccess, ScanReadsAreMergedIntoACoveringRange) {
  Buffer x = Buffer::make("X", DataType::f32(), {4, 16});
  Buffer y = Buffer::make("Y", DataType::f32(), {4, 16});
  Var vi("vi"), vj("vj");
  Stmt body = BufferStoreNode::make(
      y, BufferLoadNode::make(y, {vi, vj - 1}) + BufferLoadNode::make(x, {vi, vj}), {vi, vj});
  BlockAccessRegions regions = detect_block_access_regions(body, Stmt());
  ASSERT_EQ(regions.reads.size(), 2u);
  EXPECT_TRUE(regions.reads[0].buffer.same_as(y));  // a scan's self-read stays
  EXPECT_TRUE(is_const_int(regions.reads[0].region[1].extent, 1));
}

TEST(BlockAccess, GathersCoverTheWholeDimension) {
  Buffer table = Buffer::make("W", DataType::f32(), {100, 8});
  Buffer index = Buffer::make("I", DataType::i64(), {5});
  Buffer out = Buffer::make("O", DataType::f32(), {5, 8});
  Var vb("vb"), vd("vd");
  Expr row = cast(DataType::i32(), BufferLoadNode::make(index, {vb}));
  Stmt body = BufferStoreNode::make(out, BufferLoadNode::make(table, {row, vd}), {vb, vd});
  BlockAccessRegions regions = detect_block_access_regions(body, Stmt());
  ASSERT_EQ(regions.reads.size(), 2u);
  const BufferRegion& w = regions.reads[0].buffer.same_as(table) ? regions.reads[0] : regions.reads[1];
  EXPECT_TRUE(is_const_int(w.region[0].min, 0));
  EXPECT_TRUE(is_const_int(w.region[0].extent, 100));
  EXPECT_TRUE(w.region[1].min.same_as(vd));
}

TEST(BlockAccess, DifferentOffsetsMerge) {
  Buffer x = Buffer::make("X", DataType::f32(), {16});
  Buffer y = Buffer::make("Y", DataType::f32(), {16});
  Var v("v");
  Stmt body = BufferStoreNode::make(
      y, BufferLoadNode::make(x, {v + 2}) + BufferLoadNode::make(x, {v - 1}), {v});
  BlockAccessRegions regions = detect_block_access_regions(body, Stmt());
  ASSERT_EQ(regions.reads.size(), 1u);
  EXPECT_TRUE(is_const_int(regions.reads[0].region[0].extent, 4));  // v-1 .. v+2
}

}  // namespace
}  // namespace dragon::ir
