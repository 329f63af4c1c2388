// Variable substitution (ir/substitute.h): every use replaced, declarations kept, the same
// node back when nothing is replaced.
#include <gtest/gtest.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ir/substitute.h"

namespace dragon::ir {
namespace {

TEST(Substitute, ReplacesEveryUseInAnExpression) {
  Var i("i"), j("j"), k("k");
  Expr e = i * 4 + j + i;
  Expr out = substitute(e, {{i.get(), k + 1}});
  EXPECT_TRUE(structural_equal(out, (k + 1) * 4 + j + (k + 1))) << print_expr(out);
}

TEST(Substitute, ReplacesAllVariablesAtOnce) {
  // A swap: a replacement is never substituted again.
  Var i("i"), j("j");
  Expr out = substitute(i + j * 2, {{i.get(), j}, {j.get(), i}});
  EXPECT_TRUE(structural_equal(out, j + i * 2)) << print_expr(out);
}

TEST(Substitute, GivesTheSameNodeWhenNothingIsReplaced) {
  Var i("i"), j("j"), unused("unused");
  Expr e = i * 4 + j;
  EXPECT_TRUE(substitute(e, {{unused.get(), make_const(DataType::i32(), 0)}}).same_as(e));
  EXPECT_TRUE(substitute(e, {}).same_as(e));
  EXPECT_FALSE(substitute(Expr(), {{i.get(), j}}).defined());
  EXPECT_FALSE(substitute(Stmt(), {{i.get(), j}}).defined());

  Buffer x = Buffer::make("X", DataType::f32(), {16});
  Stmt store = BufferStoreNode::make(x, BufferLoadNode::make(x, {i}), {j});
  EXPECT_TRUE(substitute(store, {{unused.get(), i}}).same_as(store));
}

// for i in [0, n): realize b(vi = i + off) { X[vi] = Y[vi] + off }, with off and n free and
// the block reading Y[vi .. vi + n).
TEST(Substitute, ReachesBoundsBindingsRegionsIndicesAndValuesButKeepsDeclarations) {
  Buffer x = Buffer::make("X", DataType::f32(), {64});
  Buffer y = Buffer::make("Y", DataType::f32(), {64});
  Var i("i"), vi("vi"), n("n"), off("off");
  Expr off_f = cast(DataType::f32(), off);
  Stmt body = BufferStoreNode::make(x, BufferLoadNode::make(y, {vi}) + off_f, {vi});
  Block block = BlockNode::make("b", {IterVar{vi, Range::make(make_const(DataType::i32(), 0), n)}},
                                {BufferRegion{y, {Range::make(vi, n)}}}, {BufferRegion{x, {Range::make(vi, 1)}}},
                                body);
  Stmt realize = BlockRealizeNode::make({i + off}, make_const(DataType::boolean(), 1), block);
  Stmt loop = ForNode::make(i, make_const(DataType::i32(), 0), n, ForKind::kSerial, realize);

  Var m("m"), j("j");
  Stmt out = substitute(loop, {{n.get(), m * 2}, {off.get(), j}, {i.get(), j}});

  const auto* for_node = out.as<ForNode>();
  ASSERT_NE(for_node, nullptr);
  EXPECT_TRUE(for_node->loop_var.same_as(i)) << "the loop's own variable is a declaration";
  EXPECT_TRUE(structural_equal(for_node->extent, m * 2));
  const auto* realized = for_node->body.as<BlockRealizeNode>();
  ASSERT_NE(realized, nullptr);
  EXPECT_TRUE(structural_equal(realized->iter_values[0], j + j)) << print_expr(realized->iter_values[0]);
  const BlockNode* b = realized->block.get();
  EXPECT_TRUE(b->iter_vars[0].var.same_as(vi));
  EXPECT_TRUE(structural_equal(b->iter_vars[0].dom.extent, m * 2));
  EXPECT_TRUE(structural_equal(b->reads[0].region[0].extent, m * 2));
  EXPECT_TRUE(b->reads[0].region[0].min.same_as(vi));
  const auto* store = b->body.as<BufferStoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->indices[0].same_as(vi));
  EXPECT_TRUE(structural_equal(store->value, BufferLoadNode::make(y, {vi}) + cast(DataType::f32(), j)))
      << print_expr(store->value);
}

}  // namespace
}  // namespace dragon::ir
