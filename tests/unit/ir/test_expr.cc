// Expression construction: type rules, immediates, and the identity-preserving mutator.
#include <gtest/gtest.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::ir {
namespace {

TEST(Expr, ArithmeticKeepsOperandType) {
  Var i("i", DataType::i64());
  Expr e = i * 4 + 1;
  EXPECT_EQ(e.dtype(), DataType::i64());
  ASSERT_NE(e.as<AddNode>(), nullptr);
  EXPECT_EQ(as_const_int(e.as<AddNode>()->b), 1);
  EXPECT_EQ(e.as<AddNode>()->b.dtype(), DataType::i64());
}

TEST(Expr, ComparisonsYieldBool) {
  Var x("x", DataType::f32());
  EXPECT_EQ((x < 1.0).dtype(), DataType::boolean());
  EXPECT_EQ(eq(Var("i"), 3).dtype(), DataType::boolean());
}

TEST(Expr, MixedTypesAreAnInternalError) {
  Var i("i", DataType::i32());
  Var j("j", DataType::i64());
  EXPECT_THROW(i + j, InternalError);
  EXPECT_THROW(floordiv(Var("x", DataType::f32()), Var("y", DataType::f32())), InternalError);
  EXPECT_THROW(select(Var("i"), Var("a"), Var("b")), InternalError);
}

TEST(Expr, FloatImmediatesAreRoundedToTheirType) {
  Expr third = make_const(DataType::f16(), 1.0 / 3.0);
  ASSERT_NE(third.as<FloatImmNode>(), nullptr);
  EXPECT_EQ(third.as<FloatImmNode>()->value, 0.333251953125);  // nearest f16
  EXPECT_THROW(make_const(DataType::i32(), 0.5), InternalError);
  EXPECT_THROW(make_const(DataType::i8(), 300), InternalError);
}

TEST(Expr, IntrinsicsCheckOperands) {
  EXPECT_EQ(exp(Var("x", DataType::bf16())).dtype(), DataType::bf16());
  EXPECT_EQ(isnan(Var("x", DataType::f32())).dtype(), DataType::boolean());
  EXPECT_THROW(exp(Var("i")), InternalError);
  EXPECT_EQ(abs(Var("i")).dtype(), DataType::i32());
}

TEST(Expr, LoadChecksRankAndIndexType) {
  Buffer a = Buffer::make("A", DataType::f32(), {4, 8});
  EXPECT_EQ(BufferLoadNode::make(a, {Var("i"), Var("j")}).dtype(), DataType::f32());
  EXPECT_THROW(BufferLoadNode::make(a, {Var("i")}), InternalError);
  EXPECT_THROW(BufferLoadNode::make(a, {Var("i"), Var("x", DataType::f32())}), InternalError);
}

// Replaces one variable; used to check that untouched subtrees are shared, not copied.
class Substitute : public ExprMutator {
 public:
  Substitute(const VarNode* from, Expr to) : from_(from), to_(std::move(to)) {}

 protected:
  Expr visit_(const VarNode* op) override { return op == from_ ? to_ : Expr(op); }

 private:
  const VarNode* from_;
  Expr to_;
};

TEST(Functor, MutatorReturnsTheSameNodeWhenNothingChanges) {
  Var i("i"), j("j"), k("k");
  Expr left = i * 2 + j;
  Expr e = max(left, k - 1);
  Substitute nothing(Var("unused").get(), Expr(0));
  EXPECT_TRUE(nothing.visit(e).same_as(e));

  Substitute k_to_zero(k.get(), Expr(0));
  Expr changed = k_to_zero.visit(e);
  ASSERT_FALSE(changed.same_as(e));
  EXPECT_TRUE(changed.as<MaxNode>()->a.same_as(left));  // untouched operand is shared
}

TEST(Stmt, SeqStmtFlattensAndUnwrapsSingletons) {
  Buffer a = Buffer::make("A", DataType::f32(), {2});
  Stmt s0 = BufferStoreNode::make(a, make_const(DataType::f32(), 1), {Expr(0)});
  Stmt s1 = BufferStoreNode::make(a, make_const(DataType::f32(), 2), {Expr(1)});
  Stmt nested = SeqStmtNode::make({s0, SeqStmtNode::make({s1, s0})});
  ASSERT_NE(nested.as<SeqStmtNode>(), nullptr);
  EXPECT_EQ(nested.as<SeqStmtNode>()->seq.size(), 3u);
  EXPECT_TRUE(SeqStmtNode::make({s0}).same_as(s0));
}

TEST(Stmt, StoreChecksValueType) {
  Buffer a = Buffer::make("A", DataType::f16(), {2});
  EXPECT_THROW(BufferStoreNode::make(a, make_const(DataType::f32(), 1), {Expr(0)}), InternalError);
}

}  // namespace
}  // namespace dragon::ir
