// detail::replace_stmt, which every primitive's commit goes through: only the statements
// holding the replaced one are rebuilt, the rest of the function is shared, and every
// occurrence is replaced.
#include <gtest/gtest.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "ir_tree.h"
#include "schedule_test_util.h"

namespace dragon::schedule {
namespace {

using namespace dragon::ir;
using testing::workload;

const BlockNode* block_named(const PrimFunc& func, std::string_view name) {
  const BlockRealizeNode* realize = detail::find_block_realize(func, name);
  return realize == nullptr ? nullptr : realize->block.get();
}

TEST(ReplaceStmt, RebuildsOnlyTheStatementsAboveTheReplacedOne) {
  PrimFunc func = workload("softmax:shape=4x16");
  const BlockNode* exp = block_named(func, "x_exp");
  ASSERT_NE(exp, nullptr);
  Block renamed = BlockNode::make("x_exp_renamed", exp->iter_vars, exp->reads, exp->writes, exp->body, exp->init,
                                  exp->alloc_buffers, exp->annotations);
  PrimFunc out = detail::replace_in_func(func, exp, renamed);

  EXPECT_EQ(block_named(out, "x_exp"), nullptr);
  const BlockRealizeNode* realize = detail::find_block_realize(out, "x_exp_renamed");
  ASSERT_NE(realize, nullptr);
  EXPECT_EQ(realize->block.get(), renamed.get());
  // The realization keeps its bindings and predicate (the very nodes).
  const BlockRealizeNode* before = detail::find_block_realize(func, "x_exp");
  ASSERT_EQ(realize->iter_values.size(), before->iter_values.size());
  for (size_t i = 0; i < before->iter_values.size(); ++i) {
    EXPECT_TRUE(realize->iter_values[i].same_as(before->iter_values[i]));
  }
  EXPECT_TRUE(realize->predicate.same_as(before->predicate));
  // The other blocks' nests are the same objects; the root block was rebuilt.
  for (std::string_view other : {"x_max", "exp_sum", "softmax"}) {
    EXPECT_EQ(detail::find_block_realize(out, other), detail::find_block_realize(func, other)) << other;
  }
  EXPECT_NE(out.root_block(), func.root_block());
  // Nothing else changed: the printed functions differ in the name alone.
  std::string expected = print_function(func);
  const size_t at = expected.find("block x_exp ");
  ASSERT_NE(at, std::string::npos);
  expected.replace(at, 12, "block x_exp_renamed ");
  EXPECT_EQ(print_function(out), expected);
}

TEST(ReplaceStmt, AStatementNotInTheTreeChangesNothing) {
  PrimFunc func = workload("softmax:shape=4x16");
  PrimFunc other = workload("relu:shape=4x16");
  const BlockNode* elsewhere = block_named(other, "relu");
  ASSERT_NE(elsewhere, nullptr);
  Stmt replaced = detail::replace_stmt(func->body, elsewhere, Stmt(elsewhere));
  EXPECT_TRUE(replaced.same_as(func->body));
}

TEST(ReplaceStmt, EveryOccurrenceOfASharedStatementIsReplaced) {
  Var i("i", DataType::i32());
  Buffer a = Buffer::make("A", DataType::f32(), {4});
  Stmt store = BufferStoreNode::make(a, make_const(DataType::f32(), 1.0), {Expr(i)});
  Stmt other = BufferStoreNode::make(a, make_const(DataType::f32(), 3.0), {Expr(i)});
  Stmt loop = ForNode::make(i, make_zero(DataType::i32()), make_const(DataType::i32(), 4), ForKind::kSerial,
                            SeqStmtNode::make({store, other}));
  Stmt root = SeqStmtNode::make({loop, IfThenElseNode::make(make_bool(true), store, Stmt())});
  Stmt two = BufferStoreNode::make(a, make_const(DataType::f32(), 2.0), {Expr(i)});
  Stmt out = detail::replace_stmt(root, store.get(), two);

  const auto* seq = out.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr);
  const auto* new_loop = seq->seq[0].as<ForNode>();
  ASSERT_NE(new_loop, nullptr);
  const auto* body = new_loop->body.as<SeqStmtNode>();
  ASSERT_NE(body, nullptr);
  EXPECT_TRUE(body->seq[0].same_as(two));
  EXPECT_TRUE(body->seq[1].same_as(other));  // the untouched sibling is shared
  const auto* branch = seq->seq[1].as<IfThenElseNode>();
  ASSERT_NE(branch, nullptr);
  EXPECT_TRUE(branch->then_case.same_as(two));
}

}  // namespace
}  // namespace dragon::schedule
