// The arithmetic simplifier: each rule and the case where it must not fire, float folding
// with f16/bf16 rounding, statement simplification, and a randomized check that
// simplification never changes the value of an integer expression.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "dragon/ir/verify.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/half.h"
#include "expr_equal.h"
#include "rewriter.h"

namespace dragon::ir {
namespace {

// A small, fully parenthesized rendering, local to this test so that expectations do not
// depend on the printer.
std::string show(const Expr& e) {
  auto bin = [](const char* op, const auto* n) { return "(" + show(n->a) + " " + op + " " + show(n->b) + ")"; };
  auto call = [](const char* f, const auto* n) { return std::string(f) + "(" + show(n->a) + ", " + show(n->b) + ")"; };
  switch (e.kind()) {
    case NodeKind::IntImm: {
      int64_t v = e.as<IntImmNode>()->value;
      if (e.dtype().is_bool()) return v ? "true" : "false";
      return std::to_string(v);
    }
    case NodeKind::FloatImm: return fmt::format("{}", e.as<FloatImmNode>()->value);
    case NodeKind::Var: return e.as<VarNode>()->name;
    case NodeKind::Add: return bin("+", e.as<AddNode>());
    case NodeKind::Sub: return bin("-", e.as<SubNode>());
    case NodeKind::Mul: return bin("*", e.as<MulNode>());
    case NodeKind::Div: return bin("/", e.as<DivNode>());
    case NodeKind::Mod: return bin("%", e.as<ModNode>());
    case NodeKind::FloorDiv: return call("floordiv", e.as<FloorDivNode>());
    case NodeKind::FloorMod: return call("floormod", e.as<FloorModNode>());
    case NodeKind::Min: return call("min", e.as<MinNode>());
    case NodeKind::Max: return call("max", e.as<MaxNode>());
    case NodeKind::EQ: return bin("==", e.as<EQNode>());
    case NodeKind::NE: return bin("!=", e.as<NENode>());
    case NodeKind::LT: return bin("<", e.as<LTNode>());
    case NodeKind::LE: return bin("<=", e.as<LENode>());
    case NodeKind::GT: return bin(">", e.as<GTNode>());
    case NodeKind::GE: return bin(">=", e.as<GENode>());
    case NodeKind::And: return bin("&&", e.as<AndNode>());
    case NodeKind::Or: return bin("||", e.as<OrNode>());
    case NodeKind::Not: return "!" + show(e.as<NotNode>()->a);
    case NodeKind::Select: {
      const auto* s = e.as<SelectNode>();
      return "select(" + show(s->condition) + ", " + show(s->true_value) + ", " + show(s->false_value) + ")";
    }
    case NodeKind::Cast: return "cast<" + to_string(e.dtype()) + ">(" + show(e.as<CastNode>()->value) + ")";
    case NodeKind::Call: {
      const auto* c = e.as<CallNode>();
      std::string s = std::string(intrinsic_name(c->op)) + "(";
      for (size_t i = 0; i < c->args.size(); ++i) s += (i ? ", " : "") + show(c->args[i]);
      return s + ")";
    }
    case NodeKind::BufferLoad: {
      const auto* l = e.as<BufferLoadNode>();
      std::string s = l->buffer->name + "[";
      for (size_t i = 0; i < l->indices.size(); ++i) s += (i ? ", " : "") + show(l->indices[i]);
      return s + "]";
    }
    default: return "?";
  }
}

class Simplify : public ::testing::Test {
 protected:
  Var i{"i"}, j{"j"}, k{"k"};
  Analyzer analyzer;
  std::string simp(const Expr& e) { return show(analyzer.simplify(e)); }
};

// --- constant folding ----------------------------------------------------------------

TEST_F(Simplify, FoldsIntegerOperators) {
  Expr a = make_const(DataType::i32(), 7), b = make_const(DataType::i32(), -2);
  EXPECT_EQ(simp(a + b), "5");
  EXPECT_EQ(simp(a - b), "9");
  EXPECT_EQ(simp(a * b), "-14");
  EXPECT_EQ(simp(truncdiv(a, b)), "-3");
  EXPECT_EQ(simp(truncmod(a, b)), "1");
  EXPECT_EQ(simp(floordiv(a, b)), "-4");
  EXPECT_EQ(simp(floormod(a, b)), "-1");
  EXPECT_EQ(simp(min(a, b)), "-2");
  EXPECT_EQ(simp(max(a, b)), "7");
  EXPECT_EQ(simp(a < b), "false");
  EXPECT_EQ(simp(ne(a, b)), "true");
  EXPECT_EQ(simp(!(a >= b)), "false");
  EXPECT_EQ(simp(select(a > b, a, b)), "7");
  EXPECT_EQ(simp(abs(b)), "2");
}

TEST_F(Simplify, DoesNotFoldIntoOverflowOrDivisionByZero) {
  Expr big = make_const(DataType::i32(), 2147483647);
  EXPECT_EQ(simp(big + 1), "(2147483647 + 1)");
  EXPECT_EQ(simp(big * 2), "(2147483647 * 2)");
  Expr low = make_const(DataType::i32(), -2147483647 - 1);
  EXPECT_EQ(simp(truncdiv(low, make_const(DataType::i32(), -1))), "(-2147483648 / -1)");
  EXPECT_EQ(simp(abs(low)), "abs(-2147483648)");
  Expr seven = make_const(DataType::i32(), 7), zero = make_zero(DataType::i32());
  EXPECT_EQ(simp(floordiv(seven, zero)), "floordiv(7, 0)");
  EXPECT_EQ(simp(floormod(seven, zero)), "floormod(7, 0)");
  EXPECT_EQ(simp(truncdiv(seven, zero)), "(7 / 0)");
  Expr i64_max = make_const(DataType::i64(), 9.2e18);
  EXPECT_EQ(simp(i64_max + i64_max), "(9200000000000000000 + 9200000000000000000)");
}

TEST_F(Simplify, FoldsCasts) {
  EXPECT_EQ(simp(cast(DataType::i8(), make_const(DataType::i32(), 300))), "44");  // wraps like C
  EXPECT_EQ(simp(cast(DataType::i32(), make_const(DataType::f32(), -2.75))), "-2");
  EXPECT_EQ(simp(cast(DataType::boolean(), make_const(DataType::i32(), 5))), "true");
  Expr rounded = analyzer.simplify(cast(DataType::f32(), make_const(DataType::i64(), 16777217)));
  ASSERT_NE(rounded.as<FloatImmNode>(), nullptr);
  EXPECT_EQ(rounded.as<FloatImmNode>()->value, 16777216.0);
  // Out of the target's range: no defined value, left alone.
  EXPECT_NE(analyzer.simplify(cast(DataType::i32(), make_const(DataType::f32(), 3e9))).as<CastNode>(), nullptr);
  EXPECT_NE(analyzer.simplify(cast(DataType::i32(), make_const(DataType::f32(), std::nan("")))).as<CastNode>(),
            nullptr);
}

TEST_F(Simplify, FloatFoldingRoundsToTheType) {
  auto f16 = [](double v) { return make_const(DataType::f16(), v); };
  auto bf16 = [](double v) { return make_const(DataType::bf16(), v); };
  auto value = [&](const Expr& e) {
    Expr s = analyzer.simplify(e);
    const auto* imm = s.as<FloatImmNode>();
    EXPECT_NE(imm, nullptr) << show(s);
    EXPECT_EQ(s.dtype(), e.dtype());
    return imm ? imm->value : std::nan("");
  };
  // f16: 2048 + 1 is a tie between 2048 and 2050; ties go to even.
  EXPECT_EQ(value(f16(2048) + f16(1)), 2048.0);
  EXPECT_EQ(value(f16(2048) + f16(3)), 2052.0);
  EXPECT_EQ(value(f16(1) + f16(std::ldexp(1.0, -11))), 1.0);
  EXPECT_EQ(value(f16(1) + f16(3 * std::ldexp(1.0, -11))), 1.0 + std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isinf(value(f16(300) * f16(300))));  // past 65504
  EXPECT_EQ(value(f16(1) / f16(3)), round_to_f16(1.0 / 3.0));
  // bf16: 8 significant bits.
  EXPECT_EQ(value(bf16(256) + bf16(1)), 256.0);
  EXPECT_EQ(value(bf16(300) * bf16(300)), 90112.0);
  EXPECT_EQ(value(bf16(1) / bf16(3)), round_to_bf16(1.0 / 3.0));
  EXPECT_EQ(value(sqrt(bf16(2))), round_to_bf16(std::sqrt(2.0)));
  // f32 rounds once, like the hardware.
  EXPECT_EQ(value(make_const(DataType::f32(), 16777216) + make_const(DataType::f32(), 1)), 16777216.0);
  EXPECT_EQ(value(exp(make_const(DataType::f32(), 1))), round_to_f32(std::exp(1.0)));
  // Folding keeps the sign of zero.
  EXPECT_TRUE(std::signbit(value(f16(-0.0) * f16(5))));
}

TEST_F(Simplify, FloatsAreNeverReassociated) {
  Var x("x", DataType::f32());
  Expr one = make_const(DataType::f32(), 1), two = make_const(DataType::f32(), 2);
  EXPECT_EQ(simp((x + one) + two), "((x + 1) + 2)");
  EXPECT_EQ(simp(x - x), "(x - x)");
  EXPECT_EQ(simp(x * make_zero(DataType::f32())), "(x * 0)");
  // x + 0.0 is -0.0 + 0.0 = +0.0 for x = -0.0: not an identity.
  EXPECT_EQ(simp(x + make_zero(DataType::f32())), "(x + 0)");
  EXPECT_EQ(simp(x + make_const(DataType::f32(), -0.0)), "x");
  EXPECT_EQ(simp(x * one), "x");
  EXPECT_EQ(simp(x / one), "x");
  EXPECT_EQ(simp(x - make_zero(DataType::f32())), "x");
  EXPECT_EQ(simp(eq(x, x)), "(x == x)");  // false for NaN
  EXPECT_EQ(simp(!(x < one)), "!(x < 1)");  // x >= 1 is false for NaN
}

// --- canonical affine form ----------------------------------------------------------

TEST_F(Simplify, CollectsTermsIntoAnAffineForm) {
  EXPECT_EQ(simp(i * 8 + j - j + 3 * i), "(i * 11)");
  EXPECT_EQ(simp((i + 1) * 4 - 4), "(i * 4)");
  EXPECT_EQ(simp(i - i), "0");
  EXPECT_EQ(simp(2 * (3 * (i + j))), "((i * 6) + (j * 6))");
  EXPECT_EQ(simp(j + 2 + i - 5), "((j + i) - 3)");
  EXPECT_EQ(simp(0 - j), "(0 - j)");
  EXPECT_EQ(simp(4 - j * 2 - i), "((4 - (j * 2)) - i)");
  // Non-linear products are single terms that still cancel.
  EXPECT_EQ(simp(i * j + 1 - i * j), "1");
}

TEST_F(Simplify, TermOrderIsFirstAppearance) {
  EXPECT_EQ(simp(j + i + j), "((j * 2) + i)");
  EXPECT_EQ(simp(i + j + i), "((i * 2) + j)");
}

TEST_F(Simplify, AffineFormRefusesToWrap) {
  Expr big = make_const(DataType::i32(), 2000000000);
  // Rebuilding i*2000000000*2 would need a coefficient i32 cannot hold.
  EXPECT_EQ(simp(i * big * 2), "((i * 2000000000) * 2)");
}

TEST_F(Simplify, NarrowTypesKeepSumsThatDoNotFit) {
  Var x("x", DataType::i8());
  Expr c100 = make_const(DataType::i8(), 100);
  // x + 200 has no i8 spelling.
  EXPECT_EQ(simp(x + c100 + c100), "((x + 100) + 100)");
  EXPECT_EQ(simp(x + c100 - c100), "x");
}

TEST_F(Simplify, RegroupedSumsAreBoundedByTheirExactValues) {
  // v * -2 is rebuilt as 0 - v * 2, whose inner v * 2 wraps at v = 64 while the whole
  // does not; the bound of the whole must still be [-128, -120], so / 8 stays symbolic.
  Var v("v", DataType::i8());
  analyzer.bind(v, 60, 5);
  Expr e = truncdiv(truncdiv(truncdiv(v * make_const(DataType::i8(), -2), make_const(DataType::i8(), -2)),
                             make_const(DataType::i8(), 8)),
                    make_const(DataType::i8(), -1));
  Expr s = analyzer.simplify(e);
  EXPECT_EQ(as_const_int(s), std::nullopt) << show(s);
}

// --- floordiv / floormod --------------------------------------------------------------

TEST_F(Simplify, SplitIndicesUnderRanges) {
  analyzer.bind(i, 0, 4);
  analyzer.bind(j, 0, 8);
  EXPECT_EQ(simp(floordiv(i * 8 + j, 8)), "i");
  EXPECT_EQ(simp(floormod(i * 8 + j, 8)), "j");
  EXPECT_EQ(simp(floordiv(j + i * 8, 8)), "i");
  EXPECT_EQ(simp(floordiv(i * 8 + j + 8, 8)), "(i + 1)");
}

TEST_F(Simplify, SplitIndicesNeedTheRange) {
  analyzer.bind(i, 0, 4);
  EXPECT_EQ(simp(floordiv(i * 8 + j, 8)), "floordiv(((i * 8) + j), 8)");
  // floormod drops the multiple of 8 whatever j is.
  EXPECT_EQ(simp(floormod(i * 8 + j, 8)), "floormod(j, 8)");
  Analyzer too_wide;
  too_wide.bind(i, 0, 4);
  too_wide.bind(j, 0, 9);
  EXPECT_EQ(show(too_wide.simplify(floordiv(i * 8 + j, 8))), "(i + floordiv(j, 8))");
}

TEST_F(Simplify, AlignedSplitsDivideAsTheirAlignedPart) {
  // A vector's lanes j (0 <= j < 8) under a split of 64: tx*8 + j stays in one multiple of 8.
  analyzer.bind(j, 0, 8);
  EXPECT_EQ(simp(floordiv(i * 8 + j, 64)), "floordiv(i, 8)");
  EXPECT_EQ(simp(floormod(i * 8 + j, 64)), "((floormod(i, 8) * 8) + j)");
  EXPECT_EQ(simp(floordiv(i * 8 + j + 16, 64)), "floordiv((i + 2), 8)");
  EXPECT_EQ(simp(floormod(i * 8 + j + 16, 64)), "((floormod((i + 2), 8) * 8) + j)");
  // j + 1 reaches 8: no longer inside one multiple of 8.
  EXPECT_EQ(simp(floormod(i * 8 + j + 17, 64)), "floormod((((i * 8) + j) + 17), 64)");
  // Not when the residual can reach the next multiple of 8.
  Analyzer wide;
  wide.bind(j, 0, 9);
  EXPECT_EQ(show(wide.simplify(floordiv(i * 8 + j, 64))), "floordiv(((i * 8) + j), 64)");
  // Nor when the residual's range is unknown.
  Analyzer none;
  EXPECT_EQ(show(none.simplify(floordiv(i * 8 + j, 64))), "floordiv(((i * 8) + j), 64)");
}

TEST_F(Simplify, DivisionByOneAndByAFactor) {
  EXPECT_EQ(simp(floordiv(i, 1)), "i");
  EXPECT_EQ(simp(floormod(i, 1)), "0");
  EXPECT_EQ(simp(floordiv(i * 6, 6)), "i");
  EXPECT_EQ(simp(floormod(i * 6, 6)), "0");
  EXPECT_EQ(simp(floordiv(i * 4, 8)), "floordiv(i, 2)");
  EXPECT_EQ(simp(floormod(i * 4, 8)), "(floormod(i, 2) * 4)");
  EXPECT_EQ(simp(truncdiv(i, 1)), "i");
  EXPECT_EQ(simp(truncmod(i, 1)), "0");
}

TEST_F(Simplify, NestedDivisions) {
  EXPECT_EQ(simp(floordiv(floordiv(i, 4), 8)), "floordiv(i, 32)");
  EXPECT_EQ(simp(floormod(floormod(i, 32), 8)), "floormod(i, 8)");
  EXPECT_EQ(simp(floormod(floormod(i, 32), 5)), "floormod(floormod(i, 32), 5)");
  EXPECT_EQ(simp(floordiv(floordiv(i, -4), 8)), "floordiv(floordiv(i, -4), 8)");
}

TEST_F(Simplify, SmallDividends) {
  analyzer.bind(i, 0, 16);
  EXPECT_EQ(simp(floormod(i, 16)), "i");
  EXPECT_EQ(simp(floordiv(i, 16)), "0");
  EXPECT_EQ(simp(floordiv(i + 16, 16)), "1");
  EXPECT_EQ(simp(floormod(i + 32, 16)), "i");
  EXPECT_EQ(simp(floormod(i, 8)), "floormod(i, 8)");
  Analyzer none;
  EXPECT_EQ(show(none.simplify(floormod(i, 16))), "floormod(i, 16)");
  EXPECT_EQ(show(none.simplify(floordiv(i, 16))), "floordiv(i, 16)");
}

TEST_F(Simplify, FusedSplitRoundTrip) {
  EXPECT_EQ(simp(floordiv(i, 4) * 4 + floormod(i, 4)), "i");
  EXPECT_EQ(simp(floormod(i, 4) + floordiv(i, 4) * 4 + 1), "(i + 1)");
  EXPECT_EQ(simp((floordiv(i, 4) * 4 + floormod(i, 4)) * 2), "(i * 2)");
  EXPECT_EQ(simp(truncdiv(i, 4) * 4 + truncmod(i, 4)), "i");
  // The pair only merges with matching divisor and coefficient.
  EXPECT_EQ(simp(floordiv(i, 4) * 2 + floormod(i, 4)), "((floordiv(i, 4) * 2) + floormod(i, 4))");
  EXPECT_EQ(simp(floordiv(i, 4) * 4 + truncmod(i, 4)), "((floordiv(i, 4) * 4) + (i % 4))");
}

// An index unfused into three variables (a convolution's reduction k as channel, row and
// column of a 3x3 kernel) folds back, for either division and in any order of terms.
TEST_F(Simplify, ThreeWaySplitRoundTrip) {
  Expr k = i * 32 + j;
  EXPECT_EQ(simp(floordiv(k, 9) * 9 + floormod(floordiv(k, 3), 3) * 3 + floormod(k, 3)), "((i * 32) + j)");
  EXPECT_EQ(simp(floormod(k, 3) + floordiv(k, 9) * 9 + floormod(floordiv(k, 3), 3) * 3), "((i * 32) + j)");
  EXPECT_EQ(simp(truncdiv(k, 9) * 9 + truncmod(truncdiv(k, 3), 3) * 3 + truncmod(k, 3)), "((i * 32) + j)");
  EXPECT_EQ(simp(floormod(floordiv(i, 3), 3) * 3 + floormod(i, 3)), "floormod(i, 9)");
  // Times a common factor (the row stride of the tensor the index addresses).
  EXPECT_EQ(simp((floordiv(i, 12) * 12 + floormod(floordiv(i, 4), 3) * 4 + floormod(i, 4)) * 5), "(i * 5)");
  // Only with matching divisors, coefficients and kinds of division.
  EXPECT_EQ(simp(floormod(floordiv(i, 3), 3) * 2 + floormod(i, 3)),
            "((floormod(floordiv(i, 3), 3) * 2) + floormod(i, 3))");
  EXPECT_EQ(simp(floormod(floordiv(i, 3), 3) * 3 + floormod(i, 4)),
            "((floormod(floordiv(i, 3), 3) * 3) + floormod(i, 4))");
  EXPECT_EQ(simp(floormod(floordiv(i, 3), 3) * 3 + truncmod(i, 3)),
            "((floormod(floordiv(i, 3), 3) * 3) + (i % 3))");
}

TEST_F(Simplify, TruncatingDivisionOfNonNegativeValues) {
  analyzer.bind(i, 0, 4);
  analyzer.bind(j, 0, 8);
  EXPECT_EQ(simp(truncdiv(i * 8 + j, 8)), "i");
  EXPECT_EQ(simp(truncmod(i * 8 + j, 8)), "j");
  Analyzer signed_range;
  signed_range.bind(i, -4, 8);
  signed_range.bind(j, 0, 8);
  // i may be negative: truncation differs from floor, nothing to do.
  EXPECT_EQ(show(signed_range.simplify(truncdiv(i * 8 + j, 8))), "(((i * 8) + j) / 8)");
  EXPECT_EQ(show(signed_range.simplify(truncmod(i * 8 + j, 8))), "(((i * 8) + j) % 8)");
}

// --- min, max, comparisons, logic ---------------------------------------------------------

TEST_F(Simplify, MinMaxByBounds) {
  analyzer.bind(i, 0, 64);
  EXPECT_EQ(simp(min(i, 64)), "i");
  EXPECT_EQ(simp(min(i, 63)), "i");
  EXPECT_EQ(simp(max(i, 64)), "64");
  EXPECT_EQ(simp(max(i, 0)), "i");
  EXPECT_EQ(simp(min(i, 32)), "min(i, 32)");
  EXPECT_EQ(simp(min(j, j + 1)), "j");
  EXPECT_EQ(simp(max(j, j)), "j");
  EXPECT_EQ(simp(min(min(j, 8), 4)), "min(j, 4)");
  Analyzer none;
  EXPECT_EQ(show(none.simplify(min(i, 64))), "min(i, 64)");
}

TEST_F(Simplify, ComparisonsByBounds) {
  analyzer.bind(i, 0, 64);
  EXPECT_EQ(simp(i < 64), "true");
  EXPECT_EQ(simp(i >= 64), "false");
  EXPECT_EQ(simp(i <= 62), "(i <= 62)");
  EXPECT_EQ(simp(eq(i, -1)), "false");
  EXPECT_EQ(simp(ne(i, 100)), "true");
  EXPECT_EQ(simp(j < j + 1), "true");
  EXPECT_EQ(simp(eq(j * 2, j + j)), "true");
  Analyzer none;
  EXPECT_EQ(show(none.simplify(i < 64)), "(i < 64)");
}

TEST_F(Simplify, Logic) {
  Expr c = j < k;
  EXPECT_EQ(simp(make_bool(true) && c), "(j < k)");
  EXPECT_EQ(simp(c && make_bool(false)), "false");
  EXPECT_EQ(simp(c || make_bool(true)), "true");
  EXPECT_EQ(simp(make_bool(false) || c), "(j < k)");
  EXPECT_EQ(simp(c && c), "(j < k)");
  EXPECT_EQ(simp(!(!c)), "(j < k)");
  EXPECT_EQ(simp(!c), "(j >= k)");
  EXPECT_EQ(simp(!eq(j, k)), "(j != k)");
  EXPECT_EQ(simp(select(make_bool(true), j, k)), "j");
  EXPECT_EQ(simp(select(make_bool(false), j, k)), "k");
  EXPECT_EQ(simp(select(c, j, j)), "j");
  EXPECT_EQ(simp(select(c, j, k)), "select((j < k), j, k)");
  analyzer.bind(i, 0, 8);
  EXPECT_EQ(simp(select(i < 8, j, k)), "j");
}

TEST_F(Simplify, UnchangedExpressionIsTheSameNode) {
  Expr e = floordiv(i * 8 + j, 8) + k;
  EXPECT_TRUE(analyzer.simplify(e).same_as(e));
  Expr f = select(i < j, i, j);
  EXPECT_TRUE(analyzer.simplify(f).same_as(f));
}

TEST_F(Simplify, VariableBoundToOneValueIsThatValue) {
  analyzer.bind(i, 5, 1);
  EXPECT_EQ(simp(i * 2 + j), "(j + 10)");
}

// --- statements ---------------------------------------------------------------------

TEST(SimplifyStmt, LoopRangesReachTheBody) {
  Buffer a = Buffer::make("A", DataType::f32(), {4, 8});
  Var i("i"), j("j");
  Stmt store = BufferStoreNode::make(a, make_zero(DataType::f32()), {floordiv(i * 8 + j, 8), floormod(i * 8 + j, 8)});
  Stmt nest = ForNode::make(i, 0, 4, ForKind::kSerial, ForNode::make(j, 0, 8, ForKind::kSerial, store));
  Stmt s = simplify(nest);
  const auto* outer = s.as<ForNode>();
  ASSERT_NE(outer, nullptr);
  const auto* inner = outer->body.as<ForNode>();
  ASSERT_NE(inner, nullptr);
  const auto* st = inner->body.as<BufferStoreNode>();
  ASSERT_NE(st, nullptr);
  EXPECT_TRUE(st->indices[0].same_as(i));
  EXPECT_TRUE(st->indices[1].same_as(j));
  // Outside the loops nothing is known about i and j.
  Stmt bare = simplify(store);
  EXPECT_EQ(show(bare.as<BufferStoreNode>()->indices[0]), "floordiv(((i * 8) + j), 8)");
}

TEST(SimplifyStmt, BlockDomainsAndBindings) {
  Buffer a = Buffer::make("A", DataType::f32(), {64});
  Buffer b = Buffer::make("B", DataType::f32(), {16, 4});
  Var vi("vi"), vj("vj"), i("i");
  Stmt body = BufferStoreNode::make(
      b, BufferLoadNode::make(a, {vi * 4 + vj}), {floordiv(vi * 4 + vj, 4), floormod(vi * 4 + vj, 4)});
  Block block = BlockNode::make("B", {IterVar{vi, Range::from_extent(16), IterKind::kSpatial},
                                      IterVar{vj, Range::from_extent(4), IterKind::kSpatial}},
                                {BufferRegion::full(a)}, {BufferRegion::full(b)}, body);
  Stmt realize = BlockRealizeNode::make({floordiv(i, 4), floormod(i, 4) + 0}, min(i, 64) < 64, block);
  Stmt loop = ForNode::make(i, 0, 64, ForKind::kSerial, realize);
  Stmt s = simplify(loop);
  const auto* r = s.as<ForNode>()->body.as<BlockRealizeNode>();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(show(r->iter_values[0]), "floordiv(i, 4)");
  EXPECT_EQ(show(r->iter_values[1]), "floormod(i, 4)");
  EXPECT_EQ(show(r->predicate), "true");
  const auto* st = r->block->body.as<BufferStoreNode>();
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(show(st->indices[0]), "vi");
  EXPECT_EQ(show(st->indices[1]), "vj");
}

TEST(SimplifyStmt, UnchangedStatementIsTheSameNode) {
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Var i("i");
  Stmt loop = ForNode::make(i, 0, 8, ForKind::kSerial,
                            BufferStoreNode::make(a, make_const(DataType::f32(), 1), {i}));
  EXPECT_TRUE(simplify(loop).same_as(loop));
}

TEST(SimplifyStmt, EveryRegisteredOpStaysWellFormedAndSettles) {
  int simplified = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    bool all_defaults = std::all_of(op.params.begin(), op.params.end(),
                                    [](const ops::OpParam& p) { return p.default_value.has_value(); });
    if (!all_defaults) continue;
    PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
    Stmt once = simplify(func->body);
    std::vector<std::string> problems = find_ir_problems(func.with_body(once));
    EXPECT_TRUE(problems.empty()) << op.name << ": " << (problems.empty() ? "" : problems[0]);
    // A second pass finds nothing left to do.
    EXPECT_TRUE(simplify(once).same_as(once)) << op.name;
    ++simplified;
  }
  EXPECT_GE(simplified, 1);
}

// --- randomized equivalence -------------------------------------------------------------

// Exact evaluation with the IR's semantics; nullopt where the expression divides by zero
// or an operation leaves its type's range. With `wrap`, +, - and * wrap around in two's
// complement instead: the simplifier may reorder a sum so that a different intermediate
// wraps, which cannot change a final value that fits.
class Evaluator {
 public:
  Evaluator(const std::vector<std::pair<Var, int64_t>>& env, bool wrap) : env_(env), wrap_(wrap) {}

  std::optional<int64_t> eval(const Expr& e) const {
    DataType t = e.dtype();
    auto fit = [&](__int128 v) -> std::optional<int64_t> {
      if (t.is_int() && (v < int_min_value(t) || v > int_max_value(t))) return std::nullopt;
      return static_cast<int64_t>(v);
    };
    auto ring = [&](__int128 v) -> std::optional<int64_t> {
      if (!wrap_ || !t.is_int()) return fit(v);
      unsigned __int128 mask = (static_cast<unsigned __int128>(1) << t.bits()) - 1;
      unsigned __int128 bits = static_cast<unsigned __int128>(v) & mask;
      unsigned __int128 sign = static_cast<unsigned __int128>(1) << (t.bits() - 1);
      return static_cast<int64_t>(static_cast<__int128>(bits ^ sign) - static_cast<__int128>(sign));
    };
    auto both = [&](const Expr& a, const Expr& b) -> std::optional<std::pair<__int128, __int128>> {
      auto x = eval(a), y = eval(b);
      if (!x || !y) return std::nullopt;
      return std::pair<__int128, __int128>(*x, *y);
    };
    auto floor_div = [](__int128 a, __int128 b) {
      __int128 q = a / b;
      return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
    };
    switch (e.kind()) {
      case NodeKind::IntImm: return e.as<IntImmNode>()->value;
      case NodeKind::Var:
        for (const auto& [var, value] : env_) {
          if (var.same_as(e)) return value;
        }
        ADD_FAILURE() << "unbound variable " << show(e);
        return std::nullopt;
#define ARITH(Name, expr)                                       \
  case NodeKind::Name: {                                        \
    const auto* n = e.as<Name##Node>();                         \
    auto v = both(n->a, n->b);                                  \
    if (!v) return std::nullopt;                                \
    auto [a, b] = *v;                                           \
    return expr;                                                \
  }
        ARITH(Add, ring(a + b))
        ARITH(Sub, ring(a - b))
        ARITH(Mul, ring(a * b))
        ARITH(Div, b == 0 ? std::nullopt : fit(a / b))
        ARITH(Mod, b == 0 ? std::nullopt : fit(a % b))
        ARITH(FloorDiv, b == 0 ? std::nullopt : fit(floor_div(a, b)))
        ARITH(FloorMod, b == 0 ? std::nullopt : fit(a - floor_div(a, b) * b))
        ARITH(Min, fit(a < b ? a : b))
        ARITH(Max, fit(a > b ? a : b))
        ARITH(EQ, std::optional<int64_t>(a == b))
        ARITH(NE, std::optional<int64_t>(a != b))
        ARITH(LT, std::optional<int64_t>(a < b))
        ARITH(LE, std::optional<int64_t>(a <= b))
        ARITH(GT, std::optional<int64_t>(a > b))
        ARITH(GE, std::optional<int64_t>(a >= b))
#undef ARITH
      case NodeKind::And: {
        const auto* n = e.as<AndNode>();
        auto a = eval(n->a);
        if (!a || *a == 0) return a;
        return eval(n->b);
      }
      case NodeKind::Or: {
        const auto* n = e.as<OrNode>();
        auto a = eval(n->a);
        if (!a || *a != 0) return a;
        return eval(n->b);
      }
      case NodeKind::Not: {
        auto a = eval(e.as<NotNode>()->a);
        if (!a) return std::nullopt;
        return *a == 0 ? 1 : 0;
      }
      case NodeKind::Select: {
        const auto* n = e.as<SelectNode>();
        auto c = eval(n->condition);
        if (!c) return std::nullopt;
        return eval(*c != 0 ? n->true_value : n->false_value);
      }
      default: ADD_FAILURE() << "unexpected node " << show(e); return std::nullopt;
    }
  }

 private:
  const std::vector<std::pair<Var, int64_t>>& env_;
  bool wrap_;
};

class ExprGenerator {
 public:
  ExprGenerator(std::mt19937_64& rng, const std::vector<Var>& vars) : rng_(rng), vars_(vars) {}

  Expr int_expr(int depth) {
    DataType t = vars_[0].dtype();
    if (depth == 0 || pick(5) == 0) {
      if (pick(3) == 0) return make_const(t, static_cast<double>(pick(21)) - 10);
      return vars_[pick(vars_.size())];
    }
    switch (pick(15)) {
      case 0:
      case 1: return int_expr(depth - 1) + int_expr(depth - 1);
      case 2: return int_expr(depth - 1) - int_expr(depth - 1);
      case 3: return int_expr(depth - 1) * small(t);
      case 4: return int_expr(depth - 1) * int_expr(depth - 1);
      case 5: return floordiv(int_expr(depth - 1), divisor(t, depth));
      case 6: return floormod(int_expr(depth - 1), divisor(t, depth));
      case 7: return truncdiv(int_expr(depth - 1), divisor(t, depth));
      case 8: return truncmod(int_expr(depth - 1), divisor(t, depth));
      case 9: return min(int_expr(depth - 1), int_expr(depth - 1));
      case 10: return max(int_expr(depth - 1), int_expr(depth - 1));
      case 11: return select(bool_expr(depth - 1), int_expr(depth - 1), int_expr(depth - 1));
      case 12: {
        // An aligned split: x*g + floormod(y, g) divided by a multiple of g (vector lanes).
        int64_t g = static_cast<int64_t>(pick(4)) + 2;
        Expr lanes = floormod(int_expr(depth - 1), make_const(t, static_cast<double>(g)));
        Expr divisor = make_const(t, static_cast<double>(g * (static_cast<int64_t>(pick(3)) + 2)));
        Expr x = int_expr(depth - 1) * make_const(t, static_cast<double>(g)) + lanes;
        return pick(2) == 0 ? floordiv(x, divisor) : floormod(x, divisor);
      }
      case 13: {
        // A three-way split and its fusion: x as div(x, c1*c2), mod(div(x, c2), c1) and
        // mod(x, c2), floor or truncating.
        Expr x = int_expr(depth - 1);
        int64_t c1 = static_cast<int64_t>(pick(4)) + 1, c2 = static_cast<int64_t>(pick(4)) + 1;
        Expr e1 = make_const(t, static_cast<double>(c1)), e2 = make_const(t, static_cast<double>(c2));
        Expr e12 = make_const(t, static_cast<double>(c1 * c2));
        if (pick(2) == 0) return floordiv(x, e12) * e12 + floormod(floordiv(x, e2), e1) * e2 + floormod(x, e2);
        return truncdiv(x, e12) * e12 + truncmod(truncdiv(x, e2), e1) * e2 + truncmod(x, e2);
      }
      default: {
        // The split/fuse round trip with a random divisor.
        Expr x = int_expr(depth - 1);
        Expr c = make_const(t, static_cast<double>(pick(7) + 1));
        return floordiv(x, c) * c + floormod(x, c);
      }
    }
  }

  Expr bool_expr(int depth) {
    Expr a = int_expr(depth), b = int_expr(depth);
    switch (pick(9)) {
      case 0: return a < b;
      case 1: return a <= b;
      case 2: return a > b;
      case 3: return a >= b;
      case 4: return eq(a, b);
      case 5: return ne(a, b);
      case 6: return (a < b) && bool_expr(depth > 0 ? depth - 1 : 0);
      case 7: return (a <= b) || bool_expr(depth > 0 ? depth - 1 : 0);
      default: return !(a < b);
    }
  }

 private:
  uint64_t pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  Expr small(DataType t) { return make_const(t, static_cast<double>(pick(9)) - 4); }
  // Mostly constant divisors (what index arithmetic has), sometimes an expression.
  Expr divisor(DataType t, int depth) {
    if (pick(6) == 0) return int_expr(depth - 1);
    int64_t c = static_cast<int64_t>(pick(9)) + 1;
    return make_const(t, static_cast<double>(pick(5) == 0 ? -c : c));
  }

  std::mt19937_64& rng_;
  const std::vector<Var>& vars_;
};

struct PropertyRun {
  int checked = 0;  // points where the original had a value
  int changed = 0;  // expressions the simplifier rewrote
};

// Simplifies `count` random expressions over i32, i64 and i8 variables and compares
// values at random points. `wide` draws ranges up to the edges of the types, where sums
// overflow; then the simplified form is evaluated with wrapping +, -, *. Counts go to
// `run` because ASSERT_* needs a function returning void.
void check_random_expressions(uint64_t seed, int count, bool wide, PropertyRun& run) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int n = 0; n < count; ++n) {
    DataType t = n % 3 == 0 ? DataType::i32() : n % 3 == 1 ? DataType::i64() : DataType::i8();
    std::vector<Var> vars;
    std::vector<std::pair<int64_t, int64_t>> ranges;  // [lo, lo + extent)
    Analyzer analyzer;
    for (int v = 0; v < 3; ++v) {
      vars.emplace_back("v" + std::to_string(v), t);
      int64_t scale = !wide || uniform(0, 1) ? 1 : (t.bits() == 8 ? 3 : 50000000);
      int64_t lo = uniform(-20, 20) * scale;
      int64_t extent = uniform(1, 40) * scale;
      if (t.bits() == 8) extent = std::min(extent, 128 - lo);  // stay inside i8
      if (uniform(0, 3) != 0) {
        analyzer.bind(vars.back(), lo, extent);
      } else if (wide) {
        lo = t.bits() == 8 ? -128 : -2000000000;
        extent = t.bits() == 8 ? 256 : 4000000000;
      } else {
        // Unbound variables still take moderate values, so most points do not overflow.
        lo = -60;
        extent = 121;
      }
      ranges.emplace_back(lo, extent);
    }
    ExprGenerator gen(rng, vars);
    bool boolean = n % 5 == 0;
    Expr e = boolean ? gen.bool_expr(3) : gen.int_expr(4);
    Expr s = analyzer.simplify(e);
    ASSERT_EQ(s.dtype(), e.dtype()) << show(e);
    if (!s.same_as(e)) ++run.changed;
    for (int point = 0; point < 6; ++point) {
      std::vector<std::pair<Var, int64_t>> env;
      for (size_t v = 0; v < vars.size(); ++v) {
        auto [lo, extent] = ranges[v];
        env.emplace_back(vars[v], lo + uniform(0, extent - 1));
      }
      auto expected = Evaluator(env, /*wrap=*/false).eval(e);
      if (!expected) continue;  // the original divides by zero or overflows here
      // Small i32 and i64 values are checked strictly: the simplified form must not
      // overflow anywhere. i8 sums, and sums near the edges, may wrap in between.
      auto actual = Evaluator(env, /*wrap=*/wide || t.bits() == 8).eval(s);
      ++run.checked;
      ASSERT_TRUE(actual.has_value()) << show(e) << "\n  simplified to " << show(s)
                                      << "\n  fails where the original does not";
      ASSERT_EQ(*actual, *expected) << show(e) << "\n  simplified to " << show(s) << "\n  at v0="
                                    << env[0].second << " v1=" << env[1].second << " v2=" << env[2].second
                                    << " (" << to_string(t) << ")";
    }
  }
}

TEST(SimplifyProperty, RandomIntegerExpressionsKeepTheirValues) {
  const int kExpressions = 20000;
  PropertyRun run;
  check_random_expressions(20261202, kExpressions, /*wide=*/false, run);
  // The test means something only if most points were checked (i8 expressions overflow
  // often, so not all) and the simplifier acted.
  EXPECT_GT(run.checked, kExpressions * 3);
  EXPECT_GT(run.changed, kExpressions / 4);
}

TEST(SimplifyProperty, RandomExpressionsNearTheEdgesOfTheirTypes) {
  const int kExpressions = 20000;
  PropertyRun run;
  check_random_expressions(7, kExpressions, /*wide=*/true, run);
  EXPECT_GT(run.checked, kExpressions * 3);
  EXPECT_GT(run.changed, kExpressions / 4);
}

// Integer sums, differences and products are simplified a whole chain at a time
// (arith_chain.cc); the result must be the node-by-node simplifier's, node for node, for
// every expression and range: printed code and every later match depend on it.
TEST(SimplifyProperty, WholeChainsSimplifyAsNodeByNode) {
  const int kExpressions = 20000;
  std::mt19937_64 rng(20261208);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int rewritten = 0;
  for (int n = 0; n < kExpressions; ++n) {
    DataType t = n % 3 == 0 ? DataType::i32() : n % 3 == 1 ? DataType::i64() : DataType::i8();
    const bool wide = n % 2 == 1;
    std::vector<Var> vars;
    Analyzer analyzer;
    for (int v = 0; v < 3; ++v) {
      vars.emplace_back("v" + std::to_string(v), t);
      if (uniform(0, 3) == 0) continue;  // unbound
      int64_t scale = !wide || uniform(0, 1) ? 1 : (t.bits() == 8 ? 3 : 50000000);
      int64_t lo = uniform(-20, 20) * scale;
      int64_t extent = uniform(1, 40) * scale;
      if (t.bits() == 8) extent = std::min(extent, 128 - lo);
      analyzer.bind(vars.back(), lo, extent);
    }
    ExprGenerator gen(rng, vars);
    Expr e = n % 5 == 0 ? gen.bool_expr(3) : gen.int_expr(5);
    Expr chains = simplify_detail::ExprSimplifier(analyzer, /*whole_chains=*/true).simplify(e);
    Expr nodes = simplify_detail::ExprSimplifier(analyzer, /*whole_chains=*/false).simplify(e);
    ASSERT_TRUE(simplify_detail::deep_equal(chains, nodes))
        << show(e) << "\n  whole chains: " << show(chains) << "\n  node by node: " << show(nodes);
    ASSERT_EQ(chains.same_as(e), nodes.same_as(e)) << show(e);
    if (!nodes.same_as(e)) ++rewritten;
  }
  EXPECT_GT(rewritten, kExpressions / 4);  // the simplifier acted on most of them
}

}  // namespace
}  // namespace dragon::ir
