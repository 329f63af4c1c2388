// The Analyzer: interval bounds of integer expressions (const_int_bound), proofs
// (can_prove, can_prove_equal) and what binding a variable's range changes.
#include <gtest/gtest.h>

#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"

namespace dragon::ir {
namespace {

::testing::AssertionResult bound_is(const ConstIntBound& b, std::optional<int64_t> min, std::optional<int64_t> max) {
  if (b.min == min && b.max == max) return ::testing::AssertionSuccess();
  auto str = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : std::string("unbounded"); };
  return ::testing::AssertionFailure() << "bound [" << str(b.min) << ", " << str(b.max) << "], expected [" << str(min)
                                       << ", " << str(max) << "]";
}

class AnalyzerTest : public ::testing::Test {
 protected:
  Var i{"i"}, j{"j"}, n{"n", DataType::i64()};
  Analyzer analyzer;
};

TEST_F(AnalyzerTest, ConstantsAndVariables) {
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(make_const(DataType::i32(), 7)), 7, 7));
  // Unbound variables take their type's values; i64 is unbounded on both sides.
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(i), int_min_value(DataType::i32()), int_max_value(DataType::i32())));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(n), std::nullopt, std::nullopt));
  analyzer.bind(i, 2, 10);
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(i), 2, 11));
  EXPECT_EQ(analyzer.var_bound(i.get()), (std::pair<int64_t, int64_t>(2, 11)));
  EXPECT_FALSE(analyzer.var_bound(j.get()).has_value());
}

TEST_F(AnalyzerTest, IntervalArithmetic) {
  analyzer.bind(i, 0, 16);  // [0, 15]
  analyzer.bind(j, -4, 8);  // [-4, 3]
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(i + j), -4, 18));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(i - j), -3, 19));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(i * j), -60, 45));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(i * -2), -30, 0));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(floordiv(j, 4)), -1, 0));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(truncdiv(j, 4)), -1, 0));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(truncdiv(j, 8)), 0, 0));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(floormod(j, 4)), 0, 3));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(floormod(i, 4)), 0, 3));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(floormod(i, 32)), 0, 15));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(truncmod(j, 3)), -2, 2));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(min(i, j)), -4, 3));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(max(i, j)), 0, 15));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(select(i < 3, i, j + 100)), 0, 103));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(abs(j)), 0, 4));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(i < j), 0, 1));
}

TEST_F(AnalyzerTest, DivisionByARangeThatHoldsZeroIsUnbounded) {
  analyzer.bind(i, 0, 16);
  analyzer.bind(j, -4, 8);
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(floordiv(i, j)), int_min_value(DataType::i32()),
                       int_max_value(DataType::i32())));
}

TEST_F(AnalyzerTest, CastsBetweenIntegers) {
  analyzer.bind(i, -3, 10);
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(cast(DataType::i64(), i)), -3, 6));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(cast(DataType::i8(), i * 100)), -128, 127));  // may wrap
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(cast(DataType::i8(), i)), -3, 6));
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(cast(DataType::i32(), i < 2)), 0, 1));
}

TEST_F(AnalyzerTest, LoadsAreBoundedOnlyByTheirType) {
  Buffer idx = Buffer::make("idx", DataType::i8(), {4});
  analyzer.bind(i, 0, 4);
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(BufferLoadNode::make(idx, {i})), -128, 127));
  Buffer big = Buffer::make("big", DataType::i64(), {4});
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(BufferLoadNode::make(big, {i})), std::nullopt, std::nullopt));
}

TEST_F(AnalyzerTest, OverflowingBoundsBecomeUnbounded) {
  Analyzer a;
  a.bind(n, 0, int64_t{1} << 62);
  ConstIntBound b = a.const_int_bound(n * 8);
  EXPECT_FALSE(b.max.has_value());
  EXPECT_TRUE(b.min.has_value() && *b.min == 0);
}

TEST_F(AnalyzerTest, SumsAreBoundedByExactValuesNotClampedPartialSums) {
  Var v("v", DataType::i8());
  analyzer.bind(v, 60, 5);
  // v * 2 alone may wrap (128 at v = 64), but 0 - v * 2 never does: [-128, -120].
  Expr two = make_const(DataType::i8(), 2);
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(make_zero(DataType::i8()) - v * two), -128, -120));
  // A value that must fit the type is clamped to it.
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(v * two), 120, 127));
}

TEST_F(AnalyzerTest, CanProveByBounds) {
  analyzer.bind(i, 0, 64);
  EXPECT_TRUE(analyzer.can_prove(i < 64));
  EXPECT_TRUE(analyzer.can_prove(i >= 0));
  EXPECT_TRUE(analyzer.can_prove(i * 4 + 3 < 256));
  EXPECT_FALSE(analyzer.can_prove(i < 63));
  EXPECT_FALSE(analyzer.can_prove(j < 64));
  // x < y when max(x - y) < 0, even with nothing known about j.
  EXPECT_TRUE(analyzer.can_prove(j + i < j + 64));
  EXPECT_TRUE(analyzer.can_prove(i < 64 && i >= 0));
  EXPECT_FALSE(analyzer.can_prove(i < 64 && j >= 0));
  EXPECT_TRUE(analyzer.can_prove(j < 0 || i < 64));
  EXPECT_TRUE(analyzer.can_prove(floordiv(i, 8) < 8));
  EXPECT_TRUE(analyzer.can_prove(floormod(j, 8) < 8));
}

TEST_F(AnalyzerTest, CanProveEqual) {
  analyzer.bind(i, 0, 4);
  analyzer.bind(j, 0, 8);
  EXPECT_TRUE(analyzer.can_prove_equal(floordiv(i * 8 + j, 8), i));
  EXPECT_TRUE(analyzer.can_prove_equal(floordiv(j, 4) * 4 + floormod(j, 4), j));
  EXPECT_TRUE(analyzer.can_prove_equal(i + j, j + i));
  EXPECT_FALSE(analyzer.can_prove_equal(i, j));
  EXPECT_FALSE(analyzer.can_prove_equal(i, cast(DataType::i64(), i)));
  Var x("x", DataType::f32());
  EXPECT_TRUE(analyzer.can_prove_equal(x * 1.0, x));
  EXPECT_FALSE(analyzer.can_prove_equal(x + 1.0 + 1.0, x + 2.0));
}

TEST_F(AnalyzerTest, SymbolicRangesBindTheirHull) {
  analyzer.bind(i, 0, 4);
  analyzer.bind(j, Range::make(i * 8, make_const(DataType::i32(), 8)));  // j in [i*8, i*8 + 8)
  EXPECT_TRUE(bound_is(analyzer.const_int_bound(j), 0, 31));
  Analyzer empty;
  empty.bind(i, 0, 0);  // an empty loop: nothing learned
  EXPECT_FALSE(empty.var_bound(i.get()).has_value());
}

TEST_F(AnalyzerTest, CopiesAreIndependent) {
  analyzer.bind(i, 0, 8);
  Analyzer copy = analyzer;
  copy.bind(i, 0, 100);
  EXPECT_TRUE(analyzer.can_prove(i < 8));
  EXPECT_FALSE(copy.can_prove(i < 8));
}

}  // namespace
}  // namespace dragon::ir
