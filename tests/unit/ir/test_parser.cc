// Tests of the IR text parser: round trips of every registered op and of every construct
// and literal, scoping of names, and the leniencies a hand-written text may use.
#include "dragon/ir/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/ops/op_registry.h"

namespace dragon::ir {
namespace {

// A function whose root block holds `body` (stores at the root need no regions).
PrimFunc with_root(std::string name, std::vector<Param> params, Stmt body) {
  Block root = BlockNode::make("root", {}, {}, {}, std::move(body));
  return PrimFunc::make(std::move(name), std::move(params), BlockRealizeNode::make({}, make_bool(true), root));
}

// print -> parse -> print is the identity, and the parsed function equals the original.
void expect_round_trip(const PrimFunc& f) {
  std::string text = print_function(f);
  PrimFunc parsed = parse_function(text);
  EXPECT_EQ(print_function(parsed), text);
  EXPECT_TRUE(structural_equal(parsed, f)) << text;
  EXPECT_EQ(structural_hash(parsed), structural_hash(f)) << text;
}

TEST(Parser, EveryRegisteredOpRoundTrips) {
  int tested = 0;
  for (const ops::OpKind& kind : ops::OpRegistry::global().kinds()) {
    bool all_defaults = true;
    for (const ops::OpParam& p : kind.params) all_defaults &= p.default_value.has_value();
    if (!all_defaults) continue;  // an op with required parameters has no default instance
    SCOPED_TRACE(kind.name);
    expect_round_trip(ops::OpRegistry::global().make_workload(kind.name).func);
    ++tested;
  }
  EXPECT_GT(tested, 0);
}

TEST(Parser, MatmulVariantsRoundTrip) {
  for (const char* spec : {"matmul:m=64,n=16,k=32", "matmul:m=8,n=8,k=8,dtype=f16,trans_a=true",
                           "matmul:m=8,n=8,k=8,dtype=bf16,trans_b=true", "matmul:m=4,n=4,k=4,dtype=f64"}) {
    SCOPED_TRACE(spec);
    expect_round_trip(ops::OpRegistry::global().make_workload(spec).func);
  }
}

TEST(Parser, EveryConstructRoundTrips) {
  const std::string text =
      "func every(in A: f32[8, 8], in I: i64[8] range(0, 8), in V: f16x2[4], in P: f32[8] positive, "
      "inout O: f32[8, 8]) @{note = \"x\\ty\", scale = 0.5, steps = -3} {\n"
      "  block root {\n"
      "    alloc T: f32[8] local\n"
      "    alloc U: f64[]\n"
      "    for i in 2 +: 6 parallel @{k = 1} {\n"
      "      for j in 8i64 bind threadIdx.x {\n"
      "        block b [vi: S 2 +: 6 = i, vj: X 8i64 = j] if (i < 7 && !(j == 3i64)) @{tag = \"t\"} {\n"
      "          reads A[vi, 0 +: 8], I[i32(vj)], V[0 +: 4]\n"
      "          writes T[vi], O[vi, 0 +: 8], U[]\n"
      "          alloc S: f32[2] shared.dyn\n"
      "          T[vi] = select(A[vi, 0] > 0f32 || isnan(A[vi, 1]), exp(A[vi, 2]) / pow(A[vi, 3], 2f32), "
      "-inff32)\n"
      "          T[vi] = min(T[vi], max(abs(A[vi, 4]), sqrt(A[vi, 5]))) - f32(truncmod(vi, 3) + vi // 2 * (vi % 4))\n"
      "          if (I[i32(vj)] != -1i64) {\n"
      "            O[vi, i32(I[i32(vj)])] = T[vi] * 1e-05f32\n"
      "          } else {\n"
      "            alloc W: f32[1] wmma.accumulator {\n"
      "              W[0] = nanf32\n"
      "              eval f32x2(V[vi % 4])\n"
      "            }\n"
      "          }\n"
      "          U[] = f64(T[vi]) + 0.1f64\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "    for k in 4 vectorized {\n"
      "      for m in 4 unrolled {\n"
      "        block c [vk: O 4 = 3 - k, vm: R 4 = m] {\n"
      "          reads P[vm]\n"
      "          writes O[vk, 0]\n"
      "          init {\n"
      "            O[vk, 0] = -0f32\n"
      "          }\n"
      "          O[vk, 0] = O[vk, 0] + bf16(f16(P[vm])) * 0f32 + 1f32 - (2f32 - 3f32)\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n";
  // The bf16 cast of an f16 is wrong on purpose: the sum needs f32 operands.
  EXPECT_THROW(parse_function(text), UserError);
  std::string fixed = text;
  fixed.replace(fixed.find("bf16(f16(P[vm]))"), 16, "f32(bf16(P[vm]))");
  PrimFunc f = parse_function(fixed);
  EXPECT_EQ(print_function(f), fixed);
  expect_round_trip(f);
}

// Effects (barriers, cp.async groups) round-trip with their integer-constant arguments;
// anything else as an argument is a UserError naming the intrinsic.
TEST(Parser, EffectIntrinsicsRoundTripWithConstantArguments) {
  const std::string text =
      "func effects(inout O: f32[4]) {\n"
      "  block root {\n"
      "    for i in 4 {\n"
      "      eval async_commit_group()\n"
      "      eval async_wait_group(2)\n"
      "      eval sync_threads()\n"
      "      O[i] = 1f32\n"
      "    }\n"
      "  }\n"
      "}\n";
  PrimFunc f = parse_function(text);
  EXPECT_EQ(print_function(f), text);
  expect_round_trip(f);
  std::string variable = text;
  variable.replace(variable.find("async_wait_group(2)"), 19, "async_wait_group(i)");
  try {
    parse_function(variable);
    ADD_FAILURE() << "a loop variable as async_wait_group's count parsed";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("async_wait_group takes integer constants"), std::string::npos) << e.what();
  }
}

TEST(Parser, IntegerLiteralExtremesRoundTrip) {
  Buffer x = Buffer::make("X", DataType::i64(), {4});
  Buffer y = Buffer::make("Y", DataType::i8(), {4});
  Stmt body = SeqStmtNode::make({
      BufferStoreNode::make(x, IntImmNode::make(DataType::i64(), std::numeric_limits<int64_t>::min()), {0}),
      BufferStoreNode::make(x, IntImmNode::make(DataType::i64(), std::numeric_limits<int64_t>::max()), {1}),
      BufferStoreNode::make(y, IntImmNode::make(DataType::i8(), -128), {2}),
      BufferStoreNode::make(y, IntImmNode::make(DataType::i8(), 127), {-2147483647 - 1 + 2147483647 + 1 + 3}),
  });
  PrimFunc f = with_root("ints", {Param{x, ParamRole::kOutput, {}}, Param{y, ParamRole::kOutput, {}}}, body);
  expect_round_trip(f);
  EXPECT_NE(print_function(f).find("X[0] = -9223372036854775808i64"), std::string::npos);
}

TEST(Parser, FloatLiteralsRoundTripExactly) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (DataType t : {DataType::f16(), DataType::bf16(), DataType::f32(), DataType::f64()}) {
    SCOPED_TRACE(to_string(t));
    Buffer x = Buffer::make("X", t, {1});
    std::vector<Stmt> stores;
    for (int k = 0; k < 300; ++k) {
      double v = mantissa(rng) * std::pow(10.0, exponent(rng) % (t.bits() == 16 ? 5 : 30));
      stores.push_back(BufferStoreNode::make(x, make_const(t, v), {0}));
    }
    for (double v :
         {0.0, -0.0, 1.0, 0.1, 1e-7, 65504.0, 1e-40, 3.4e38, 1.7e308, std::numeric_limits<double>::denorm_min(),
          std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
      stores.push_back(BufferStoreNode::make(x, make_const(t, v), {0}));
    }
    PrimFunc f = with_root("floats", {Param{x, ParamRole::kOutput, {}}}, SeqStmtNode::make(stores));
    expect_round_trip(f);
  }
}

TEST(Parser, DuplicateNamesRoundTripToTheSameBindings) {
  // Nested loops and buffers that share names: the printer's suffixes keep them apart.
  Buffer a = Buffer::make("A", DataType::i32(), {4, 4});
  Buffer b = Buffer::make("A", DataType::i32(), {4, 4});
  Var outer("i"), inner("i");
  Stmt store = BufferStoreNode::make(b, BufferLoadNode::make(a, {inner, outer}) + outer, {outer, inner});
  Stmt nest = ForNode::make(outer, 0, 4, ForKind::kSerial, ForNode::make(inner, 0, 4, ForKind::kSerial, store));
  PrimFunc f = with_root("dup", {Param{a, ParamRole::kInput, {}}, Param{b, ParamRole::kOutput, {}}}, nest);
  expect_round_trip(f);
  // The same text with the roles of the loops swapped is a different function.
  Stmt swapped = BufferStoreNode::make(b, BufferLoadNode::make(a, {outer, inner}) + outer, {outer, inner});
  PrimFunc g =
      with_root("dup", f->params,
                ForNode::make(outer, 0, 4, ForKind::kSerial, ForNode::make(inner, 0, 4, ForKind::kSerial, swapped)));
  EXPECT_FALSE(structural_equal(parse_function(print_function(f)), g));
}

TEST(Parser, BlockBodySeesOnlyItsIterationVariables) {
  std::string text =
      "func f(out Y: f32[4]) {\n"
      "  block root {\n"
      "    for i in 4 {\n"
      "      block b [v: S 4 = i] {\n"
      "        writes Y[v]\n"
      "        Y[i] = 0f32\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n";
  try {
    parse_function(text, "scope.ir");
    FAIL() << "the loop variable is not visible in the block";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "scope.ir:6:11: variable 'i' is defined outside this block, and a block sees only its own "
                 "iteration variables");
  }
}

TEST(Parser, InnerDefinitionsShadowOuterOnes) {
  std::string text =
      "func f(out Y: i32[4, 4]) {\n"
      "  block root {\n"
      "    for i in 4 {\n"
      "      for i in 4 {\n"
      "        Y[i, 0] = i\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n";
  PrimFunc f = parse_function(text);
  const auto* outer = f.root_block()->body.as<ForNode>();
  ASSERT_NE(outer, nullptr);
  const auto* inner = outer->body.as<ForNode>();
  ASSERT_NE(inner, nullptr);
  const auto* store = inner->body.as<BufferStoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->value.same_as(inner->loop_var));
  // Reprinted canonically, the inner loop gets a fresh name.
  EXPECT_NE(print_function(f).find("for i_1 in 4 {\n        Y[i_1, 0] = i_1"), std::string::npos);
}

TEST(Parser, AcceptsCommentsAndFreeLayout) {
  std::string canonical = print_function(ops::OpRegistry::global().make_workload("matmul:m=4,n=4,k=4").func);
  std::string loose =
      "# a hand-written matmul\n"
      "func matmul ( in A : f32[4,4], in B: f32[4, 4], out C: f32[4, 4] ) { block root { for i0 in 4 { for i1 in 4 {\n"
      "  for r0 in 4 { block C [vi0: S 4 = i0, vi1: S 4 = i1, vr0: R 4 = r0] {\n"
      "    reads A[vi0, vr0], B[vr0, vi1]  # operands\n"
      "    writes C[vi0, vi1]\n"
      "    init { C[vi0, vi1] = 0f32 }\n"
      "    C[vi0,vi1]=C[vi0,vi1]+A[vi0,vr0]*B[vr0,vi1]\n"
      "} } } } } }\n";
  EXPECT_EQ(print_function(parse_function(loose)), canonical);
}

TEST(Parser, SubtractionWithoutSpacesIsNotANegativeLiteral) {
  std::string text = "func f(out Y: i32[4]) {\n  block root {\n    for i in 4 {\n      Y[i] = i-1\n    }\n  }\n}\n";
  EXPECT_NE(print_function(parse_function(text)).find("Y[i] = i - 1"), std::string::npos);
}

TEST(Parser, ScopeIsReadOnlyFromTheAllocLine) {
  // A block allocation without a scope is followed by a store on the next line.
  std::string text =
      "func f(out Y: f32[4]) {\n"
      "  block root {\n"
      "    alloc T: f32[4]\n"
      "    Y[0] = 0f32\n"
      "  }\n"
      "}\n";
  PrimFunc f = parse_function(text);
  EXPECT_EQ(f.root_block()->alloc_buffers.size(), 1u);
  EXPECT_EQ(f.root_block()->alloc_buffers[0]->scope, "global");
  EXPECT_EQ(print_function(f), text);
}

}  // namespace
}  // namespace dragon::ir
