// The IR verifier: functions from the builder and the op registry are clean, and each
// rule, broken on its own in hand-built IR, is reported naming the culprit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "dragon/ir/op.h"
#include "dragon/ir/verify.h"
#include "dragon/ops/op_registry.h"
#include "dragon/ops/te.h"
#include "dragon/support/error.h"

namespace dragon::ir {
namespace {

std::string joined(const std::vector<std::string>& problems) {
  std::string s;
  for (const std::string& p : problems) s += "\n  " + p;
  return s;
}

// Exactly one problem, and it mentions every fragment.
::testing::AssertionResult one_problem_mentioning(const PrimFunc& func, const std::vector<std::string>& fragments) {
  std::vector<std::string> problems = find_ir_problems(func);
  if (problems.size() != 1) {
    return ::testing::AssertionFailure() << problems.size() << " problems:" << joined(problems);
  }
  for (const std::string& f : fragments) {
    if (problems[0].find(f) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << f << "' not in: " << problems[0];
    }
  }
  return ::testing::AssertionSuccess();
}

PrimFunc make_func(std::vector<Param> params, Stmt body, std::vector<Buffer> allocs = {}) {
  Block root = BlockNode::make("root", {}, {}, {}, std::move(body), Stmt(), std::move(allocs));
  return PrimFunc::make("f", std::move(params), BlockRealizeNode::make({}, make_bool(true), root));
}

Param input(const Buffer& b) { return Param{b, ParamRole::kInput, ValueDomain::real()}; }
Param output(const Buffer& b) { return Param{b, ParamRole::kOutput, ValueDomain::real()}; }

Expr i32(int64_t value) { return make_const(DataType::i32(), static_cast<double>(value)); }

IterVar spatial(const Var& v, int64_t extent) { return IterVar{v, Range::from_extent(i32(extent)), IterKind::kSpatial}; }

// for i in [0, extent): block `name` (vi = i) with the given regions and body.
Stmt loop_block(const Var& i, const Var& vi, int64_t extent, const std::string& name, std::vector<BufferRegion> reads,
                std::vector<BufferRegion> writes, Stmt body) {
  Block block = BlockNode::make(name, {spatial(vi, extent)}, std::move(reads), std::move(writes), std::move(body));
  return ForNode::make(i, 0, i32(extent), ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
}

// A clean copy kernel B[i] = A[i] that the rule tests below break one way each.
class VerifyRule : public ::testing::Test {
 protected:
  Buffer a = Buffer::make("A", DataType::f32(), {8});
  Buffer b = Buffer::make("B", DataType::f32(), {8});
  Var i{"i"}, vi{"vi"};
  Expr load_a(const Expr& index) const { return BufferLoadNode::make(a, {index}); }
  Stmt store_b(const Expr& value, const Expr& index) const { return BufferStoreNode::make(b, value, {index}); }
  PrimFunc copy_with_body(Stmt body) const {
    return make_func({input(a), output(b)},
                     loop_block(i, vi, 8, "copy", {BufferRegion::full(a)}, {BufferRegion::full(b)}, std::move(body)));
  }
};

// --- clean functions ---------------------------------------------------------------------

TEST_F(VerifyRule, TheBaseKernelIsClean) {
  PrimFunc func = copy_with_body(store_b(load_a(vi), vi));
  EXPECT_TRUE(find_ir_problems(func).empty()) << joined(find_ir_problems(func));
  EXPECT_NO_THROW(check_well_formed(func, "test"));
}

TEST(Verify, BuilderStagesAreClean) {
  ops::FunctionBuilder fb("mixed");
  ops::Tensor x = fb.input("X", DataType::f32(), {4, 16});
  ops::Tensor idx = fb.input("I", DataType::i32(), {3}, ValueDomain::int_range(0, 4));
  ops::Tensor y = fb.compute("Y", {4, 16}, [&](const ops::IndexVars& v) { return exp(x(v[0], v[1])); });
  ops::Tensor s = fb.reduce("S", {4}, {16}, DataType::f32(), ops::Reducer::sum(),
                            [&](const ops::IndexVars& v, const ops::IndexVars& r) { return y(v[0], r[0]); });
  ops::Tensor c = fb.scan("C", {4, 16}, 1, true, [&](const ops::IndexVars& v) { return y(v[0], v[1]); },
                          [&](const ops::IndexVars& v, Expr prev) { return prev + y(v[0], v[1]); });
  ops::Tensor am = fb.arg_reduce(
      "AM", {4}, {16}, true, [&](const ops::IndexVars& v, const ops::IndexVars& r) { return c(v[0], r[0]); },
      [](const ops::IndexVars& r) { return Expr(r[0]); });
  ops::Tensor g = fb.declare("G", DataType::f32(), {3});
  fb.custom("gather", {3}, {IterKind::kSpatial}, [&](const ops::IndexVars& v) {
    return BufferStoreNode::make(g.buffer(), s(idx(v[0])), {v[0]});
  });
  PrimFunc func = fb.build({am, g});
  std::vector<std::string> problems = find_ir_problems(func);
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(Verify, EveryRegisteredOpIsClean) {
  int verified = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    bool all_defaults = std::all_of(op.params.begin(), op.params.end(),
                                    [](const ops::OpParam& p) { return p.default_value.has_value(); });
    if (!all_defaults) continue;
    try {
      ops::Workload w = ops::OpRegistry::global().make_workload(op.name);
      std::vector<std::string> problems = find_ir_problems(w.func);
      EXPECT_TRUE(problems.empty()) << w.spec << joined(problems);
      ++verified;
    } catch (const dragon::InternalError& e) {
      ADD_FAILURE() << op.name << ": " << e.what();
    }
  }
  EXPECT_GE(verified, 1);
}

// --- variables ---------------------------------------------------------------------------

TEST_F(VerifyRule, LoopVariableOutsideItsLoop) {
  Var j("j"), vj("vj");
  Stmt first = loop_block(i, vi, 8, "copy", {BufferRegion::full(a)}, {BufferRegion::full(b)},
                          store_b(load_a(vi), vi));
  // The second nest binds its block to i, whose loop has ended.
  Block block = BlockNode::make("late", {spatial(vj, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vj), vj));
  Stmt second = ForNode::make(j, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, SeqStmtNode::make({first, second}));
  EXPECT_TRUE(one_problem_mentioning(func, {"'i'", "bindings of block 'late'"}));
}

TEST_F(VerifyRule, BlockBodyUsesAnOuterLoopVariable) {
  PrimFunc func = copy_with_body(store_b(load_a(i), vi));
  EXPECT_TRUE(one_problem_mentioning(func, {"'i'", "block 'copy'"}));
}

TEST_F(VerifyRule, BlockRegionUsesAnOuterLoopVariable) {
  BufferRegion read{a, {Range{i, make_const(DataType::i32(), 1)}}};
  PrimFunc func = make_func({input(a), output(b)},
                            loop_block(i, vi, 8, "copy", {read}, {BufferRegion::full(b)}, store_b(load_a(vi), vi)));
  EXPECT_TRUE(one_problem_mentioning(func, {"'i'", "read region of buffer 'A' of block 'copy'"}));
}

TEST_F(VerifyRule, BindingUsesTheBlocksOwnVariable) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({vi}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"'vi'", "bindings of block 'copy'"}));
}

TEST_F(VerifyRule, PredicateUsesAVariableFromInsideTheBlock) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, vi < 4, block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"'vi'", "predicate of block 'copy'"}));
}

TEST_F(VerifyRule, LoopsNestedInsideABlockAreVisibleToIt) {
  Var k("k");
  Buffer acc = Buffer::make("acc", DataType::f32(), {1}, "local");
  Stmt inner = ForNode::make(k, 0, 4, ForKind::kSerial,
                             BufferStoreNode::make(acc, BufferLoadNode::make(acc, {0}) + load_a(k), {0}));
  Stmt body = AllocateNode::make(acc, SeqStmtNode::make({inner, store_b(BufferLoadNode::make(acc, {0}), vi)}));
  PrimFunc func = copy_with_body(body);
  EXPECT_TRUE(find_ir_problems(func).empty()) << joined(find_ir_problems(func));
}

TEST_F(VerifyRule, SameVariableForTwoLoops) {
  Var vj("vj");
  Block block = BlockNode::make("copy", {spatial(vi, 8), spatial(vj, 8)}, {BufferRegion::full(a)},
                                {BufferRegion::full(b)}, store_b(load_a(vi), vj));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial,
                            ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i, i}, make_bool(true), block)));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"variable 'i' is defined twice", "loop 'i'"}));
}

TEST_F(VerifyRule, LoopVariableReusedAsBlockVariable) {
  Block block = BlockNode::make("copy", {spatial(i, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(i), i));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"variable 'i' is defined twice", "block 'copy'"}));
}

// --- buffers -----------------------------------------------------------------------------

TEST_F(VerifyRule, BufferThatIsNeitherParameterNorAllocated) {
  Buffer stray = Buffer::make("stray", DataType::f32(), {8});
  PrimFunc func = copy_with_body(store_b(load_a(vi) + BufferLoadNode::make(stray, {vi}), vi));
  std::vector<std::string> problems = find_ir_problems(func);
  // Out of scope, and not in the block's reads either.
  ASSERT_EQ(problems.size(), 2u) << joined(problems);
  EXPECT_NE(problems[0].find("buffer 'stray'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("neither a parameter nor allocated"), std::string::npos) << problems[0];
}

TEST_F(VerifyRule, BufferAllocatedByASiblingIsOutOfScope) {
  Buffer tmp = Buffer::make("tmp", DataType::f32(), {8});
  Var j("j"), vj("vj");
  Block producer = BlockNode::make("produce", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                   store_b(load_a(vi), vi), Stmt(), {tmp});
  Stmt first = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), producer));
  Block consumer = BlockNode::make("consume", {spatial(vj, 8)}, {}, {BufferRegion::full(tmp)},
                                   BufferStoreNode::make(tmp, make_zero(DataType::f32()), {vj}));
  Stmt second = ForNode::make(j, 0, 8, ForKind::kSerial, BlockRealizeNode::make({j}, make_bool(true), consumer));
  PrimFunc func = make_func({input(a), output(b)}, SeqStmtNode::make({first, second}));
  std::vector<std::string> problems = find_ir_problems(func);
  ASSERT_FALSE(problems.empty());
  for (const std::string& p : problems) EXPECT_NE(p.find("buffer 'tmp'"), std::string::npos) << p;
}

TEST_F(VerifyRule, BufferAllocatedTwice) {
  Buffer tmp = Buffer::make("tmp", DataType::f32(), {8});
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi), Stmt(), {tmp});
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest, {tmp});
  EXPECT_TRUE(one_problem_mentioning(func, {"buffer 'tmp' is allocated twice", "block 'root'", "block 'copy'"}));
}

TEST_F(VerifyRule, ParameterAlsoAllocated) {
  PrimFunc clean = copy_with_body(store_b(load_a(vi), vi));
  PrimFunc func = make_func({input(a), output(b)}, clean->body.as<BlockRealizeNode>()->block->body, {a});
  EXPECT_TRUE(one_problem_mentioning(func, {"buffer 'A' is allocated twice", "parameter 'A'"}));
}

TEST_F(VerifyRule, ParameterOutsideGlobalScope) {
  Buffer shared = Buffer::make("S", DataType::f32(), {8}, "shared");
  PrimFunc clean = copy_with_body(store_b(load_a(vi), vi));
  // PrimFunc::make refuses such a parameter; build the node directly as a broken pass might.
  auto* node = new PrimFuncNode();
  node->name = "f";
  node->params = {input(a), output(b), input(shared)};
  node->body = clean->body;
  EXPECT_TRUE(one_problem_mentioning(PrimFunc(node), {"parameter 'S'", "scope 'shared'"}));
}

// --- blocks ------------------------------------------------------------------------------

TEST_F(VerifyRule, DuplicateBlockNames) {
  Var j("j"), vj("vj");
  Stmt first = loop_block(i, vi, 8, "copy", {BufferRegion::full(a)}, {BufferRegion::full(b)}, store_b(load_a(vi), vi));
  Stmt second = loop_block(j, vj, 8, "copy", {BufferRegion::full(a)}, {BufferRegion::full(b)}, store_b(load_a(vj), vj));
  PrimFunc func = make_func({input(a), output(b)}, SeqStmtNode::make({first, second}));
  EXPECT_TRUE(one_problem_mentioning(func, {"block name 'copy'", "2 blocks"}));
}

TEST_F(VerifyRule, BodyIsNotARootBlock) {
  Stmt nest = loop_block(i, vi, 8, "copy", {BufferRegion::full(a)}, {BufferRegion::full(b)}, store_b(load_a(vi), vi));
  PrimFunc func = PrimFunc::make("f", {input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"'root'"}));
}

TEST_F(VerifyRule, RootBlockWithIterationVariables) {
  Var r("r");
  Block root = BlockNode::make("root", {spatial(r, 1)}, {}, {}, copy_with_body(store_b(load_a(vi), vi))
                                                                      ->body.as<BlockRealizeNode>()
                                                                      ->block->body);
  PrimFunc func = PrimFunc::make("f", {input(a), output(b)},
                                 BlockRealizeNode::make({make_zero(DataType::i32())}, make_bool(true), root));
  EXPECT_TRUE(one_problem_mentioning(func, {"block 'root' has 1 iteration variables"}));
}

TEST_F(VerifyRule, StoreMissingFromWrites) {
  Buffer c = Buffer::make("C", DataType::f32(), {8});
  PrimFunc func = make_func(
      {input(a), output(b), output(c)},
      loop_block(i, vi, 8, "copy", {BufferRegion::full(a)}, {BufferRegion::full(b)},
                 SeqStmtNode::make({store_b(load_a(vi), vi), BufferStoreNode::make(c, load_a(vi), {vi})})));
  EXPECT_TRUE(one_problem_mentioning(func, {"block 'copy' stores to buffer 'C'", "writes"}));
}

TEST_F(VerifyRule, LoadMissingFromReads) {
  PrimFunc func = make_func({input(a), output(b)},
                            loop_block(i, vi, 8, "copy", {}, {BufferRegion::full(b)}, store_b(load_a(vi), vi)));
  EXPECT_TRUE(one_problem_mentioning(func, {"block 'copy' loads buffer 'A'"}));
}

TEST_F(VerifyRule, ReductionMayReadItsOwnOutput) {
  Var k("k"), vk("vk");
  Buffer s = Buffer::make("S", DataType::f32(), {1});
  Block block = BlockNode::make(
      "sum", {IterVar{vk, Range::from_extent(8), IterKind::kReduce}}, {BufferRegion::full(a)}, {BufferRegion::full(s)},
      BufferStoreNode::make(s, BufferLoadNode::make(s, {0}) + load_a(vk), {0}),
      BufferStoreNode::make(s, make_zero(DataType::f32()), {0}));
  Stmt nest = ForNode::make(k, 0, 8, ForKind::kSerial, BlockRealizeNode::make({k}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(s)}, nest);
  EXPECT_TRUE(find_ir_problems(func).empty()) << joined(find_ir_problems(func));
}

TEST_F(VerifyRule, RegionRankDiffersFromBuffer) {
  // BlockNode::make refuses this; build the node directly.
  auto* node = new BlockNode();
  node->name = "copy";
  node->iter_vars = {spatial(vi, 8)};
  node->reads = {BufferRegion{a, {Range::from_extent(8), Range::from_extent(1)}}};
  node->writes = {BufferRegion::full(b)};
  node->body = store_b(load_a(vi), vi);
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), Block(node)));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"read region of buffer 'A' of block 'copy'", "rank 2", "rank 1"}));
}

TEST_F(VerifyRule, BindingCountDiffersFromIterationVariables) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  // BlockRealizeNode::make refuses this; build the node directly.
  auto* realize = new BlockRealizeNode();
  realize->iter_values = {i, i};
  realize->predicate = make_bool(true);
  realize->block = block;
  PrimFunc func = make_func({input(a), output(b)}, ForNode::make(i, 0, 8, ForKind::kSerial, Stmt(realize)));
  EXPECT_TRUE(one_problem_mentioning(func, {"block 'copy' has 1 iteration variables but 2 bindings"}));
}

TEST_F(VerifyRule, IterationVariableTypeDiffersFromDomain) {
  IterVar wide{vi, Range::from_extent(make_const(DataType::i64(), 8)), IterKind::kSpatial};
  Block block = BlockNode::make("copy", {wide}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"iteration variable 'vi' of block 'copy' of type i32", "i64"}));
}

TEST_F(VerifyRule, InitWithoutReduceVariable) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi), store_b(make_zero(DataType::f32()), vi));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"block 'copy' has an init but no reduce"}));
}

TEST_F(VerifyRule, NegativeIterationDomain) {
  Block block = BlockNode::make("copy", {spatial(vi, -3)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"iteration variable 'vi' of block 'copy'", "negative extent -3"}));
}

// --- loops -------------------------------------------------------------------------------

TEST_F(VerifyRule, NegativeLoopExtent) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = ForNode::make(i, 0, -1, ForKind::kSerial, BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"loop 'i'", "negative extent -1"}));
}

// A loop node made directly, past ForNode::make's checks.
Stmt raw_loop(const Var& var, Expr min, Expr extent, ForKind kind, std::string tag, Stmt body) {
  auto* node = new ForNode();
  node->loop_var = var;
  node->min = std::move(min);
  node->extent = std::move(extent);
  node->for_kind = kind;
  node->thread_tag = std::move(tag);
  node->body = std::move(body);
  return Stmt(node);
}

TEST_F(VerifyRule, LoopVariableTypeDiffersFromBounds) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = raw_loop(i, make_zero(DataType::i64()), make_const(DataType::i64(), 8), ForKind::kSerial, "",
                       BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"loop 'i' of type i32 has bounds of type i64"}));
}

TEST_F(VerifyRule, ThreadBindingWithAnInvalidTag) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = ForNode::make(i, 0, 8, ForKind::kThreadBinding, BlockRealizeNode::make({i}, make_bool(true), block),
                            "threadIdx.w");
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"loop 'i'", "invalid thread tag 'threadIdx.w'"}));
  Stmt good = ForNode::make(i, 0, 8, ForKind::kThreadBinding, BlockRealizeNode::make({i}, make_bool(true), block),
                            "blockIdx.y");
  EXPECT_TRUE(find_ir_problems(make_func({input(a), output(b)}, good)).empty());
}

TEST_F(VerifyRule, TagOnALoopThatIsNotBound) {
  Block block = BlockNode::make("copy", {spatial(vi, 8)}, {BufferRegion::full(a)}, {BufferRegion::full(b)},
                                store_b(load_a(vi), vi));
  Stmt nest = raw_loop(i, make_zero(DataType::i32()), make_const(DataType::i32(), 8), ForKind::kParallel,
                       "threadIdx.x", BlockRealizeNode::make({i}, make_bool(true), block));
  PrimFunc func = make_func({input(a), output(b)}, nest);
  EXPECT_TRUE(one_problem_mentioning(func, {"loop 'i' is parallel but has thread tag 'threadIdx.x'"}));
}

// --- outputs and reporting ---------------------------------------------------------------

TEST_F(VerifyRule, OutputNeverWritten) {
  Buffer c = Buffer::make("C", DataType::f32(), {8});
  PrimFunc clean = copy_with_body(store_b(load_a(vi), vi));
  PrimFunc func = make_func({input(a), output(b), output(c)}, clean->body.as<BlockRealizeNode>()->block->body);
  EXPECT_TRUE(one_problem_mentioning(func, {"output parameter 'C' is never written"}));
}

TEST_F(VerifyRule, CheckWellFormedThrowsWithEveryProblem) {
  PrimFunc func = copy_with_body(store_b(load_a(i), i));
  ASSERT_EQ(find_ir_problems(func).size(), 2u);
  try {
    check_well_formed(func, "after test");
    FAIL() << "no exception";
  } catch (const dragon::InternalError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("after test"), std::string::npos) << what;
    for (const std::string& p : find_ir_problems(func)) EXPECT_NE(what.find(p), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace dragon::ir
