// Tests of structural equality and hashing: alpha-equivalence (names never matter,
// binding structure does), sensitivity to every other field, and a hash that agrees with
// equality and is pinned so that the workload key cannot change unnoticed.
#include "dragon/ir/structural_equal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/ops/op_registry.h"

namespace dragon::ir {
namespace {

const std::string kBase =
    "func mm(in A: f32[8, 8], in B: f32[8, 8], out C: f32[8, 8]) {\n"
    "  block root {\n"
    "    for i0 in 8 {\n"
    "      for i1 in 8 parallel {\n"
    "        for r0 in 8 {\n"
    "          block C [vi0: S 8 = i0, vi1: S 8 = i1, vr0: R 8 = r0] {\n"
    "            reads A[vi0, vr0], B[vr0, vi1]\n"
    "            writes C[vi0, vi1]\n"
    "            init {\n"
    "              C[vi0, vi1] = 0f32\n"
    "            }\n"
    "            C[vi0, vi1] = C[vi0, vi1] + A[vi0, vr0] * B[vr0, vi1] * 2f32\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n";

// kBase with the first occurrence of `from` replaced by `to`.
std::string edit(const std::string& from, const std::string& to) {
  std::string text = kBase;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// kBase with every occurrence of `from` replaced by `to`.
std::string edit_all(const std::string& from, const std::string& to) {
  std::string text = kBase;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(StructuralEqual, SeparateParsesAreEqualAndHashAlike) {
  PrimFunc a = parse_function(kBase), b = parse_function(kBase);
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, NamesOfVariablesAndBuffersDoNotMatter) {
  std::string renamed = kBase;
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{{"vi0", "p"},
                                                                          {"vi1", "q"},
                                                                          {"vr0", "k"},
                                                                          {"i0", "x"},
                                                                          {"i1", "y"},
                                                                          {"r0", "z"},
                                                                          {"A[", "Lhs["},
                                                                          {"A:", "Lhs:"},
                                                                          {"B[", "Rhs["},
                                                                          {"B:", "Rhs:"},
                                                                          {"C[", "Out["},
                                                                          {"C:", "Out:"}}) {
    for (size_t at = renamed.find(from); at != std::string::npos; at = renamed.find(from, at + to.size())) {
      renamed.replace(at, from.size(), to);
    }
  }
  ASSERT_NE(renamed.find("block C [p: S 8 = x"), std::string::npos) << renamed;  // the block keeps its name
  PrimFunc a = parse_function(kBase), b = parse_function(renamed);
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, OneChangedFieldMakesThemDiffer) {
  PrimFunc base = parse_function(kBase);
  struct Case {
    const char* what;
    std::string text;
  };
  std::vector<Case> cases = {
      {"a constant", edit("* 2f32", "* 3f32")},
      {"an init constant", edit("= 0f32", "= -0f32")},
      {"a type", edit_all("f32", "f64")},
      {"a loop kind", edit("8 parallel", "8 vectorized")},
      {"a loop made serial", edit(" parallel", "")},
      {"a block name", edit("block C [", "block D [")},
      {"an index", edit("A[vi0, vr0] * B", "A[vr0, vi0] * B")},
      {"a binding", edit("vi1: S 8 = i1", "vi1: S 8 = i0")},
      {"an iteration kind", edit("vi1: S 8", "vi1: X 8")},
      {"a domain", edit("vr0: R 8 = r0", "vr0: R 1 +: 7 = r0 % 7 + 1")},
      {"a function name", edit("func mm(", "func mm2(")},
      {"a parameter role", edit("in B:", "inout B:")},
      {"a value domain", edit("in A: f32[8, 8]", "in A: f32[8, 8] positive")},
      {"a shape", edit_all("8, 8]", "8, 16]")},
      {"an annotation", edit("8 parallel {", "8 parallel @{k = 1} {")},
      {"a block annotation", edit("= r0] {", "= r0] @{k = \"v\"} {")},
      {"a predicate", edit("= r0] {", "= r0] if (i0 < 7) {")},
      {"a thread tag", edit("8 parallel", "8 bind threadIdx.x")},
      {"a read region", edit("reads A[vi0, vr0]", "reads A[vi0, 0 +: 8]")},
      {"an operator", edit("C[vi0, vi1] + A", "C[vi0, vi1] - A")},
      {"the parameter order", edit("in A: f32[8, 8], in B: f32[8, 8]", "in B: f32[8, 8], in A: f32[8, 8]")},
  };
  uint64_t base_hash = structural_hash(base);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    PrimFunc other = parse_function(c.text);
    EXPECT_FALSE(structural_equal(base, other)) << c.text;
    EXPECT_FALSE(structural_equal(other, base));
    EXPECT_NE(structural_hash(other), base_hash) << c.text;
  }
}

TEST(StructuralEqual, BindingStructureMatters) {
  // Each loop keeps its own variable: swapping which loop an index uses is a change,
  // even though the two texts use the same set of names.
  Buffer x = Buffer::make("X", DataType::i32(), {4, 4});
  Var i("i"), j("j"), k("k"), l("l");
  Stmt a = ForNode::make(i, 0, 4, ForKind::kSerial,
                         ForNode::make(j, 0, 4, ForKind::kSerial, BufferStoreNode::make(x, i, {i, j})));
  Stmt b = ForNode::make(k, 0, 4, ForKind::kSerial,
                         ForNode::make(l, 0, 4, ForKind::kSerial, BufferStoreNode::make(x, l, {k, l})));
  Stmt c = ForNode::make(k, 0, 4, ForKind::kSerial,
                         ForNode::make(l, 0, 4, ForKind::kSerial, BufferStoreNode::make(x, k, {k, l})));
  EXPECT_FALSE(structural_equal(a, b));
  EXPECT_TRUE(structural_equal(a, c));
  EXPECT_EQ(structural_hash(a), structural_hash(c));
  EXPECT_NE(structural_hash(a), structural_hash(b));
}

TEST(StructuralEqual, FreeVariablesCompareByIdentity) {
  Var x("x"), y("x");
  EXPECT_TRUE(structural_equal(x + 1, x + 1));
  EXPECT_FALSE(structural_equal(x + 1, y + 1));
  EXPECT_FALSE(structural_equal(x + 1, x + 2));
  EXPECT_FALSE(structural_equal(x + 1, Expr(IntImmNode::make(DataType::i64(), 1)) + cast(DataType::i64(), x)));
  EXPECT_EQ(structural_hash(x + 1), structural_hash(x + 1));
  // A variable bound in a statement is not equal to a free one of the same name.
  Buffer buf = Buffer::make("X", DataType::i32(), {4});
  Stmt bound = ForNode::make(x, 0, 4, ForKind::kSerial, BufferStoreNode::make(buf, x, {x}));
  Stmt mixed = ForNode::make(y, 0, 4, ForKind::kSerial, BufferStoreNode::make(buf, x, {y}));
  EXPECT_FALSE(structural_equal(bound, mixed));
}

TEST(StructuralEqual, FloatConstantsCompareByValueBits) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  Expr n1 = make_const(DataType::f32(), nan), n2 = make_const(DataType::f32(), -nan);
  EXPECT_TRUE(structural_equal(n1, n2));
  EXPECT_EQ(structural_hash(n1), structural_hash(n2));
  EXPECT_FALSE(structural_equal(make_const(DataType::f32(), 0.0), make_const(DataType::f32(), -0.0)));
  EXPECT_FALSE(structural_equal(make_const(DataType::f32(), 1.0), make_const(DataType::f16(), 1.0)));
  EXPECT_FALSE(structural_equal(Expr(1), IntImmNode::make(DataType::i64(), 1)));
}

TEST(StructuralEqual, EveryRegisteredOpEqualsItsReparse) {
  for (const ops::OpKind& kind : ops::OpRegistry::global().kinds()) {
    bool all_defaults = true;
    for (const ops::OpParam& p : kind.params) all_defaults &= p.default_value.has_value();
    if (!all_defaults) continue;
    SCOPED_TRACE(kind.name);
    PrimFunc f = ops::OpRegistry::global().make_workload(kind.name).func;
    PrimFunc g = ops::OpRegistry::global().make_workload(kind.name).func;
    EXPECT_TRUE(structural_equal(f, g));
    EXPECT_EQ(structural_hash(f), structural_hash(g));
    EXPECT_TRUE(structural_equal(parse_function(print_function(f)), g));
  }
}

TEST(StructuralEqual, HashIsPinned) {
  // The hash is the workload key: a change to it invalidates every stored record, so it
  // must be deliberate (update this value and say so).
  EXPECT_EQ(structural_hash(parse_function(kBase)), 0x7f595538b61b1000ULL);
}

}  // namespace
}  // namespace dragon::ir
