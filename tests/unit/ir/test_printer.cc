// Tests of the canonical IR text printer: layout, precedence, literals and the naming
// that keeps printed names unambiguous. Round trips through the parser are in parser_test.
#include "dragon/ir/printer.h"

#include <gtest/gtest.h>

#include <limits>

#include "dragon/ir/op.h"
#include "dragon/ops/op_registry.h"

namespace dragon::ir {
namespace {

TEST(Printer, MatmulIsTheDocumentedText) {
  PrimFunc f = ops::OpRegistry::global().make_workload("matmul:m=64,n=16,k=32").func;
  EXPECT_EQ(print_function(f),
            "func matmul(in A: f32[64, 32], in B: f32[32, 16], out C: f32[64, 16]) {\n"
            "  block root {\n"
            "    for i0 in 64 {\n"
            "      for i1 in 16 {\n"
            "        for r0 in 32 {\n"
            "          block C [vi0: S 64 = i0, vi1: S 16 = i1, vr0: R 32 = r0] {\n"
            "            reads A[vi0, vr0], B[vr0, vi1]\n"
            "            writes C[vi0, vi1]\n"
            "            init {\n"
            "              C[vi0, vi1] = 0f32\n"
            "            }\n"
            "            C[vi0, vi1] = C[vi0, vi1] + A[vi0, vr0] * B[vr0, vi1]\n"
            "          }\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
  // Deterministic: a second build prints the same bytes.
  PrimFunc g = ops::OpRegistry::global().make_workload("matmul:m=64,n=16,k=32").func;
  EXPECT_EQ(print_function(f), print_function(g));
}

TEST(Printer, ParenthesesOnlyWhereNeeded) {
  Var a("a"), b("b"), c("c");
  EXPECT_EQ(print_expr((a + b) * c), "(a + b) * c");
  EXPECT_EQ(print_expr(a + b * c), "a + b * c");
  EXPECT_EQ(print_expr(a - b - c), "a - b - c");
  EXPECT_EQ(print_expr(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(print_expr(a - (b + c)), "a - (b + c)");
  EXPECT_EQ(print_expr(floordiv(a, b * c)), "a // (b * c)");
  EXPECT_EQ(print_expr(floormod(a * b, c)), "a * b % c");
  EXPECT_EQ(print_expr(truncdiv(a, b)), "a / b");
  EXPECT_EQ(print_expr((a < b && b < c) || !eq(a, c)), "a < b && b < c || !(a == c)");
  EXPECT_EQ(print_expr((a < b || b < c) && ne(a, c)), "(a < b || b < c) && a != c");
  EXPECT_EQ(print_expr(!!(a <= b)), "!!(a <= b)");
  EXPECT_EQ(print_expr(eq(a < b, b >= c)), "a < b == b >= c");
  EXPECT_EQ(print_expr(a > b * -3), "a > b * -3");
  EXPECT_EQ(print_expr(a - -3), "a - -3");
}

TEST(Printer, CallsCastsAndLoads) {
  Var a("a"), b("b");
  Buffer x = Buffer::make("X", DataType::f32(), {4, 8});
  Expr load = BufferLoadNode::make(x, {a, b + 1});
  EXPECT_EQ(print_expr(load), "X[a, b + 1]");
  EXPECT_EQ(print_expr(min(a, b)), "min(a, b)");
  EXPECT_EQ(print_expr(max(a, b) + 1), "max(a, b) + 1");
  EXPECT_EQ(print_expr(truncmod(a, b)), "truncmod(a, b)");
  EXPECT_EQ(print_expr(select(a < b, load, exp(load))), "select(a < b, X[a, b + 1], exp(X[a, b + 1]))");
  EXPECT_EQ(print_expr(cast(DataType::f16(), load)), "f16(X[a, b + 1])");
  EXPECT_EQ(print_expr(pow(load, load)), "pow(X[a, b + 1], X[a, b + 1])");
  EXPECT_EQ(print_expr(isnan(load) || isinf(load)), "isnan(X[a, b + 1]) || isinf(X[a, b + 1])");
  Buffer s = Buffer::make("S", DataType::i64(), {});
  EXPECT_EQ(print_expr(BufferLoadNode::make(s, {})), "S[]");
}

TEST(Printer, LiteralsCarryTheirType) {
  EXPECT_EQ(print_expr(Expr(5)), "5");
  EXPECT_EQ(print_expr(Expr(-3)), "-3");
  EXPECT_EQ(print_expr(IntImmNode::make(DataType::i64(), 5)), "5i64");
  EXPECT_EQ(print_expr(IntImmNode::make(DataType::i8(), -1)), "-1i8");
  EXPECT_EQ(print_expr(IntImmNode::make(DataType::i64(), std::numeric_limits<int64_t>::min())),
            "-9223372036854775808i64");
  EXPECT_EQ(print_expr(make_bool(true)), "true");
  EXPECT_EQ(print_expr(make_bool(false)), "false");
  EXPECT_EQ(print_expr(make_const(DataType::f32(), 0.5)), "0.5f32");
  EXPECT_EQ(print_expr(make_const(DataType::f32(), 1)), "1f32");
  EXPECT_EQ(print_expr(make_const(DataType::f32(), 0.1)), "0.1f32");
  EXPECT_EQ(print_expr(make_const(DataType::f64(), 0.1)), "0.1f64");
  EXPECT_EQ(print_expr(make_const(DataType::f16(), 1e-5)), "1e-05f16");
  EXPECT_EQ(print_expr(make_const(DataType::f16(), 100)), "100f16");
  EXPECT_EQ(print_expr(make_const(DataType::f16(), 0.1)), "0.1f16");
  EXPECT_EQ(print_expr(make_const(DataType::bf16(), -2.5)), "-2.5bf16");
  EXPECT_EQ(print_expr(make_const(DataType::f32(), 1e20)), "1e+20f32");
  EXPECT_EQ(print_expr(max_value(DataType::f32())), "inff32");
  EXPECT_EQ(print_expr(min_value(DataType::f16())), "-inff16");
  EXPECT_EQ(print_expr(make_const(DataType::f64(), std::numeric_limits<double>::quiet_NaN())), "nanf64");
  EXPECT_EQ(print_expr(make_const(DataType::f32(), -0.0)), "-0f32");
}

// One loop nest around one block storing `value` into B[v].
PrimFunc one_store(Var loop, Var v, Expr value, Buffer a, Buffer b) {
  Block block = BlockNode::make("B", {IterVar{v, Range::from_extent(8), IterKind::kSpatial}}, {}, {},
                                BufferStoreNode::make(b, value, {v}));
  Stmt nest = ForNode::make(loop, 0, 8, ForKind::kSerial, BlockRealizeNode::make({loop}, make_bool(true), block));
  Block root = BlockNode::make("root", {}, {}, {}, nest);
  return PrimFunc::make("f", {Param{a, ParamRole::kInput, {}}, Param{b, ParamRole::kOutput, {}}},
                        BlockRealizeNode::make({}, make_bool(true), root));
}

TEST(Printer, NamesAreMadeUnambiguous) {
  // Two buffers named A, a variable named like a keyword, a name that is no identifier.
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Buffer b = Buffer::make("A", DataType::f32(), {8});
  Var loop("for"), v("v.0");
  std::string text = print_function(one_store(loop, v, BufferLoadNode::make(a, {v}), a, b));
  EXPECT_NE(text.find("func f(in A: f32[8], out A_1: f32[8]) {"), std::string::npos) << text;
  EXPECT_NE(text.find("for for_1 in 8 {"), std::string::npos) << text;
  EXPECT_NE(text.find("block B [v_0: S 8 = for_1] {"), std::string::npos) << text;
  EXPECT_NE(text.find("A_1[v_0] = A[v_0]"), std::string::npos) << text;
}

TEST(Printer, NestedVariablesOfOneNameGetSuffixes) {
  Buffer x = Buffer::make("X", DataType::i32(), {4, 4});
  Var outer("i"), inner("i");
  Stmt store = BufferStoreNode::make(x, outer + inner, {outer, inner});
  Stmt nest = ForNode::make(outer, 0, 4, ForKind::kSerial, ForNode::make(inner, 0, 4, ForKind::kSerial, store));
  EXPECT_EQ(print_stmt(nest),
            "for i in 4 {\n"
            "  for i_1 in 4 {\n"
            "    X[i, i_1] = i + i_1\n"
            "  }\n"
            "}\n");
  // Sibling loops reuse the name: each is out of scope at the other.
  Stmt siblings = SeqStmtNode::make(
      {ForNode::make(outer, 0, 4, ForKind::kSerial, store),
       ForNode::make(inner, 0, 4, ForKind::kSerial, BufferStoreNode::make(x, inner, {inner, inner}))});
  EXPECT_NE(print_stmt(siblings).find("for i in 4 {\n  X[i, i] = i\n}\n"), std::string::npos) << print_stmt(siblings);
}

TEST(Printer, FreeNamesAreReservedInAPrintedStatement) {
  // A block body printed alone: its iteration variable `i` is free there, so the loop
  // inside that reuses the name, and a nested block's own `i`, must not shadow it.
  Buffer x = Buffer::make("X", DataType::i32(), {4, 4});
  Var free("i"), loop("i"), nested("i");
  Block inner = BlockNode::make("inner", {IterVar{nested, Range::from_extent(4), IterKind::kSpatial}}, {},
                                {BufferRegion{x, {Range::make(nested, 1), Range::make(0, 4)}}},
                                BufferStoreNode::make(x, nested, {nested, 0}));
  Stmt body = ForNode::make(loop, 0, 4, ForKind::kSerial,
                            SeqStmtNode::make({BufferStoreNode::make(x, free + loop, {free, loop}),
                                               BlockRealizeNode::make({loop}, make_bool(true), inner)}));
  EXPECT_EQ(print_stmt(body),
            "for i_1 in 4 {\n"
            "  X[i, i_1] = i + i_1\n"
            "  block inner [i_1: S 4 = i_1] {\n"
            "    writes X[i_1, 0 +: 4]\n"
            "    X[i_1, 0] = i_1\n"
            "  }\n"
            "}\n");
  // Two free variables of one name print apart.
  EXPECT_EQ(print_expr(free + nested), "i + i_1");
}

TEST(Printer, LoopKindsRangesAndAnnotations) {
  Buffer x = Buffer::make("X", DataType::f32(), {64});
  Var i("i");
  Stmt store = BufferStoreNode::make(x, make_const(DataType::f32(), 1), {i});
  Annotations ann{{"pragma_auto_unroll_max_step", int64_t{16}},
                  {"note", std::string("a \"b\"\n")},
                  {"ratio", 2.0},
                  {"meta_schedule.x", -0.25}};
  EXPECT_EQ(print_stmt(ForNode::make(i, 4, 60, ForKind::kParallel, store)),
            "for i in 4 +: 60 parallel {\n  X[i] = 1f32\n}\n");
  EXPECT_EQ(print_stmt(ForNode::make(i, 0, 64, ForKind::kVectorized, store)),
            "for i in 64 vectorized {\n  X[i] = 1f32\n}\n");
  EXPECT_EQ(print_stmt(ForNode::make(i, 0, 64, ForKind::kUnrolled, store, {}, ann)),
            "for i in 64 unrolled @{meta_schedule.x = -0.25, note = \"a \\\"b\\\"\\n\", "
            "pragma_auto_unroll_max_step = 16, ratio = 2.0} {\n  X[i] = 1f32\n}\n");
  EXPECT_EQ(print_stmt(ForNode::make(i, 0, 64, ForKind::kThreadBinding, store, "threadIdx.x")),
            "for i in 64 bind threadIdx.x {\n  X[i] = 1f32\n}\n");
}

TEST(Printer, BlockHeaderPartsAppearOnlyWhenPresent) {
  Buffer x = Buffer::make("X", DataType::f32(), {64, 8});
  Buffer y = Buffer::make("Y", DataType::f32(), {64});
  Buffer tmp = Buffer::make("T", DataType::f32(), {8}, "shared");
  Var i("i"), v("v"), r("r");
  std::vector<IterVar> ivs{IterVar{v, Range::make(2, 60), IterKind::kSpatial},
                           IterVar{r, Range::from_extent(8), IterKind::kOrdered}};
  Stmt body = BufferStoreNode::make(y, BufferLoadNode::make(x, {v, r}), {v});
  Block block =
      BlockNode::make("b", ivs, {BufferRegion{x, {Range::make(v, 1), Range::make(0, 8)}}},
                      {BufferRegion{y, {Range::make(v, 1)}}}, body, Stmt(), {tmp}, Annotations{{"k", int64_t{1}}});
  Stmt realize = BlockRealizeNode::make({i + 2, Expr(0)}, i < 50, block);
  EXPECT_EQ(print_stmt(realize),
            "block b [v: S 2 +: 60 = i + 2, r: O 8 = 0] if (i < 50) @{k = 1} {\n"
            "  reads X[v, 0 +: 8]\n"
            "  writes Y[v]\n"
            "  alloc T: f32[8] shared\n"
            "  Y[v] = X[v, r]\n"
            "}\n");
}

TEST(Printer, OtherStatements) {
  Buffer x = Buffer::make("X", DataType::f32(), {4});
  Buffer t = Buffer::make("T", DataType::f32(), {4}, "local");
  Var i("i");
  Stmt then_case = BufferStoreNode::make(x, make_const(DataType::f32(), 1), {i});
  Stmt else_case = BufferStoreNode::make(t, BufferLoadNode::make(x, {i}), {i});
  Stmt s = AllocateNode::make(t, IfThenElseNode::make(i < 2, then_case, else_case));
  EXPECT_EQ(print_stmt(s),
            "alloc T: f32[4] local {\n"
            "  if (i < 2) {\n"
            "    X[i] = 1f32\n"
            "  } else {\n"
            "    T[i] = X[i]\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(print_stmt(EvaluateNode::make(exp(BufferLoadNode::make(x, {0})))), "eval exp(X[0])\n");
}

TEST(Printer, ParametersDomainsAndAttributes) {
  Buffer idx = Buffer::make("idx", DataType::i64(), {16});
  Buffer off = Buffer::make("off", DataType::i32(), {5});
  Buffer p = Buffer::make("p", DataType::f32(), {2, 3});
  Buffer q = Buffer::make("q", DataType::f32(), {});
  Buffer out = Buffer::make("out", DataType::f32(), {2, 3});
  Stmt body = BufferStoreNode::make(out, BufferLoadNode::make(p, {0, 0}), {0, 0});
  PrimFunc f = PrimFunc::make(
      "g",
      {Param{idx, ParamRole::kInput, ValueDomain::int_range(-1, 100)},
       Param{off, ParamRole::kInput, ValueDomain::offsets(16, 8)}, Param{p, ParamRole::kInput, ValueDomain::simplex()},
       Param{q, ParamRole::kInput, ValueDomain::positive()}, Param{out, ParamRole::kInOut, {}}},
      body, Annotations{{"target", std::string("cuda")}});
  EXPECT_EQ(print_function(f),
            "func g(in idx: i64[16] range(-1, 100), in off: i32[5] offsets(16, 8), in p: f32[2, 3] simplex, "
            "in q: f32[] positive, inout out: f32[2, 3]) @{target = \"cuda\"} {\n"
            "  out[0, 0] = p[0, 0]\n"
            "}\n");
}

}  // namespace
}  // namespace dragon::ir
