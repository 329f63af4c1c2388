// Statement and block semantics of the interpreter on hand-built IR: loops of every kind,
// block bindings, predicates, init, ordered scans, nested blocks, allocations, bounds.
#include <gtest/gtest.h>

#include <cmath>

#include "dragon/support/error.h"
#include "interp_test_util.h"

namespace dragon::interp {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace): the test helpers
using ir::DataType;
using ir::Expr;
using ir::Var;
using tensor::HostTensor;

Expr load(const ir::Buffer& b, std::vector<Expr> indices) { return ir::BufferLoadNode::make(b, std::move(indices)); }
ir::Stmt store(const ir::Buffer& b, Expr value, std::vector<Expr> indices) {
  return ir::BufferStoreNode::make(b, std::move(value), std::move(indices));
}
ir::IterVar iter(const Var& v, int64_t min, int64_t extent, ir::IterKind kind) {
  return ir::IterVar{v, ir::Range::make(ir::make_const(v.dtype(), min), ir::make_const(v.dtype(), extent)), kind};
}
ir::Stmt realize(std::vector<Expr> values, ir::Block block, Expr predicate = ir::make_bool(true)) {
  return ir::BlockRealizeNode::make(std::move(values), std::move(predicate), std::move(block));
}

TEST(InterpreterTest, ElementwiseLoopNest) {
  ir::Buffer a = ir::Buffer::make("A", DataType::f32(), {3, 4});
  ir::Buffer b = ir::Buffer::make("B", DataType::f32(), {3, 4});
  Var i("i"), j("j");
  ir::Stmt body = loop(i, 3, loop(j, 4, store(b, load(a, {i, j}) * 2.0f, {i, j})));
  ir::PrimFunc f = make_func({input(a), output(b)}, body);
  std::vector<HostTensor> args{tensor(DataType::f32(), {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}),
                               HostTensor(DataType::f32(), {3, 4})};
  run(f, args);
  for (int64_t k = 0; k < 12; ++k) EXPECT_EQ(args[1].get(k), 2.0 * k);
}

// C[i] = 100 + sum_k A[i, k] over a reduce domain [2, 5): init must run exactly once per
// i, when k is at the domain's min (2), not at 0.
TEST(InterpreterTest, InitRunsOnlyAtTheFirstReducePosition) {
  ir::Buffer a = ir::Buffer::make("A", DataType::f32(), {2, 5});
  ir::Buffer c = ir::Buffer::make("C", DataType::f32(), {2});
  ir::Buffer inits = ir::Buffer::make("Inits", DataType::i32(), {2});
  Var i("i"), k("k"), vi("vi"), vk("vk");
  ir::Stmt init = ir::SeqStmtNode::make(
      {store(c, ir::make_const(DataType::f32(), 100), {vi}), store(inits, load(inits, {vi}) + 1, {vi})});
  ir::Block block =
      ir::BlockNode::make("C", {iter(vi, 0, 2, ir::IterKind::kSpatial), iter(vk, 2, 3, ir::IterKind::kReduce)}, {}, {},
                          store(c, load(c, {vi}) + load(a, {vi, vk}), {vi}), init);
  ir::Stmt body = loop(i, 2, loop(k, 3, realize({i, k + 2}, block)));
  ir::PrimFunc f = make_func({input(a), output(c), output(inits)}, body);
  std::vector<HostTensor> args{tensor(DataType::f32(), {2, 5}, {1, 2, 3, 4, 5, 10, 20, 30, 40, 50}),
                               HostTensor(DataType::f32(), {2}), HostTensor(DataType::i32(), {2})};
  run(f, args);
  EXPECT_EQ(args[1].get(0), 100 + 3 + 4 + 5);
  EXPECT_EQ(args[1].get(1), 100 + 30 + 40 + 50);
  EXPECT_EQ(args[2].get_int(0), 1);
  EXPECT_EQ(args[2].get_int(1), 1);
}

// A block whose binding would store out of bounds runs only where the predicate holds.
TEST(InterpreterTest, FalsePredicateSkipsTheBlock) {
  ir::Buffer b = ir::Buffer::make("B", DataType::i32(), {7});
  Var i("i"), vi("vi");
  ir::Block block = ir::BlockNode::make("B", {iter(vi, 0, 7, ir::IterKind::kSpatial)}, {}, {}, store(b, vi * vi, {vi}));
  ir::PrimFunc f = make_func({output(b)}, loop(i, 10, realize({i}, block, i < 7)));
  std::vector<HostTensor> args{HostTensor(DataType::i32(), {7})};
  run(f, args);
  for (int64_t v = 0; v < 7; ++v) EXPECT_EQ(args[0].get_int(v), v * v);
}

// An ordered scan whose select reads B[i - 1] only when i > 0: the unchosen branch at
// i == 0 would be out of bounds.
TEST(InterpreterTest, OrderedScanCarriesItsDependence) {
  ir::Buffer a = ir::Buffer::make("A", DataType::f32(), {5});
  ir::Buffer b = ir::Buffer::make("B", DataType::f32(), {5});
  Var i("i"), vi("vi");
  Expr value = ir::select(ir::eq(vi, 0), load(a, {vi}), load(b, {vi - 1}) + load(a, {vi}));
  ir::Block block =
      ir::BlockNode::make("scan", {iter(vi, 0, 5, ir::IterKind::kOrdered)}, {}, {}, store(b, value, {vi}));
  ir::PrimFunc f = make_func({input(a), output(b)}, loop(i, 5, realize({i}, block)));
  std::vector<HostTensor> args{tensor(DataType::f32(), {5}, {1, 2, 3, 4, 5}), HostTensor(DataType::f32(), {5})};
  run(f, args);
  EXPECT_EQ(args[1].get(0), 1);
  EXPECT_EQ(args[1].get(2), 6);
  EXPECT_EQ(args[1].get(4), 15);
}

// Loops of every kind run sequentially and in order: a running count written through a
// thread-bound, a parallel, a vectorized and an unrolled loop comes out as 0, 1, 2, ...
TEST(InterpreterTest, EveryLoopKindRunsInOrder) {
  ir::Buffer counter = ir::Buffer::make("counter", DataType::i32(), {1});
  ir::Buffer order = ir::Buffer::make("order", DataType::i32(), {2, 2, 2, 2});
  Var t("t"), p("p"), v("v"), u("u");
  ir::Stmt body = ir::SeqStmtNode::make(
      {store(order, load(counter, {0}), {t, p, v, u}), store(counter, load(counter, {0}) + 1, {0})});
  auto make_loop = [](Var var, ir::ForKind kind, ir::Stmt inner, std::string tag = {}) {
    return ir::ForNode::make(var, 0, 2, kind, std::move(inner), std::move(tag));
  };
  ir::Stmt nest =
      make_loop(t, ir::ForKind::kThreadBinding,
                make_loop(p, ir::ForKind::kParallel,
                          make_loop(v, ir::ForKind::kVectorized, make_loop(u, ir::ForKind::kUnrolled, body))),
                "threadIdx.x");
  ir::PrimFunc f = make_func({output(counter), output(order)}, ir::SeqStmtNode::make({store(counter, 0, {0}), nest}));
  std::vector<HostTensor> args{HostTensor(DataType::i32(), {1}), HostTensor(DataType::i32(), {2, 2, 2, 2})};
  run(f, args);
  for (int64_t k = 0; k < 16; ++k) EXPECT_EQ(args[1].get_int(k), k);
  EXPECT_EQ(args[0].get_int(0), 16);
}

// An outer block over rows allocates a row buffer that an inner block fills and a second
// inner block (a reduction) consumes.
TEST(InterpreterTest, NestedBlocksWithAnAllocatedBuffer) {
  ir::Buffer a = ir::Buffer::make("A", DataType::f32(), {3, 4});
  ir::Buffer out = ir::Buffer::make("Out", DataType::f32(), {3});
  ir::Buffer row = ir::Buffer::make("row", DataType::f32(), {4}, "local");
  Var i("i"), j("j"), k("k"), vi("vi"), vj("vj"), vo("vo"), vk("vk");
  ir::Block fill = ir::BlockNode::make("fill", {iter(vj, 0, 4, ir::IterKind::kSpatial)}, {}, {},
                                       store(row, load(a, {vi, vj}) * 10.0f, {vj}));
  ir::Block sum = ir::BlockNode::make(
      "sum", {iter(vo, 0, 3, ir::IterKind::kSpatial), iter(vk, 0, 4, ir::IterKind::kReduce)}, {}, {},
      store(out, load(out, {vo}) + load(row, {vk}), {vo}), store(out, ir::make_zero(DataType::f32()), {vo}));
  ir::Stmt inner = ir::SeqStmtNode::make({loop(j, 4, realize({j}, fill)), loop(k, 4, realize({vi, k}, sum))});
  ir::Block outer = ir::BlockNode::make("outer", {iter(vi, 0, 3, ir::IterKind::kSpatial)}, {}, {}, inner, {}, {row});
  ir::PrimFunc f = make_func({input(a), output(out)}, loop(i, 3, realize({i}, outer)));
  std::vector<HostTensor> args{tensor(DataType::f32(), {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
                               HostTensor(DataType::f32(), {3})};
  run(f, args);
  EXPECT_EQ(args[1].get(0), 100);
  EXPECT_EQ(args[1].get(1), 260);
  EXPECT_EQ(args[1].get(2), 420);
}

// A block's buffer is fresh (NaN, or 0x5a.. for ints) every time the block runs: a value
// written in one execution must not leak into the next.
TEST(InterpreterTest, AllocatedBuffersStartUninitialisedEachTime) {
  ir::Buffer tmp = ir::Buffer::make("tmp", DataType::f32(), {2}, "local");
  ir::Buffer itmp = ir::Buffer::make("itmp", DataType::i32(), {1}, "local");
  ir::Buffer out = ir::Buffer::make("Out", DataType::f32(), {2});
  ir::Buffer iout = ir::Buffer::make("IOut", DataType::i32(), {1});
  Var i("i"), vi("vi");
  ir::Stmt body = ir::SeqStmtNode::make({
      ir::IfThenElseNode::make(ir::eq(vi, 0), store(tmp, ir::make_const(DataType::f32(), 7), {1})),
      store(out, load(tmp, {1}), {vi}),
      store(iout, load(itmp, {0}), {0}),
  });
  ir::Block block = ir::BlockNode::make("b", {iter(vi, 0, 2, ir::IterKind::kSpatial)}, {}, {}, body, {}, {tmp, itmp});
  ir::PrimFunc f = make_func({output(out), output(iout)}, loop(i, 2, realize({i}, block)));
  std::vector<HostTensor> args{HostTensor(DataType::f32(), {2}), HostTensor(DataType::i32(), {1})};
  run(f, args);
  EXPECT_EQ(args[0].get(0), 7);
  EXPECT_TRUE(std::isnan(args[0].get(1)));
  EXPECT_EQ(static_cast<uint32_t>(args[1].get_int(0)), 0x5a5a5a5au);
}

TEST(InterpreterTest, RootAllocationsAndAllocateStatements) {
  ir::Buffer mid = ir::Buffer::make("mid", DataType::f64(), {3});
  ir::Buffer scratch = ir::Buffer::make("scratch", DataType::bf16(), {1}, "local");
  ir::Buffer out = ir::Buffer::make("Out", DataType::f64(), {3});
  ir::Buffer probe = ir::Buffer::make("Probe", DataType::bf16(), {1});
  Var i("i"), j("j");
  ir::Stmt body = ir::SeqStmtNode::make({
      loop(i, 3, store(mid, ir::cast(DataType::f64(), i) + 0.5, {i})),
      loop(j, 3, store(out, load(mid, {j}) * 2.0, {j})),
      ir::AllocateNode::make(scratch, store(probe, load(scratch, {0}), {0})),
  });
  ir::PrimFunc f = make_func({output(out), output(probe)}, body, {mid});
  std::vector<HostTensor> args{HostTensor(DataType::f64(), {3}), HostTensor(DataType::bf16(), {1})};
  run(f, args);
  EXPECT_EQ(args[0].get(0), 1);
  EXPECT_EQ(args[0].get(2), 5);
  EXPECT_TRUE(std::isnan(args[1].get(0)));
}

TEST(InterpreterTest, IfThenElseTakesOneBranch) {
  ir::Buffer b = ir::Buffer::make("B", DataType::i8(), {4});
  Var i("i");
  ir::Stmt body = loop(i, 4,
                       ir::IfThenElseNode::make(i < 2, store(b, ir::make_const(DataType::i8(), 1), {i}),
                                                store(b, ir::make_const(DataType::i8(), -1), {i})));
  std::vector<HostTensor> args{HostTensor(DataType::i8(), {4})};
  run(make_func({output(b)}, body), args);
  EXPECT_EQ(args[0].get_int(0), 1);
  EXPECT_EQ(args[0].get_int(1), 1);
  EXPECT_EQ(args[0].get_int(2), -1);
  EXPECT_EQ(args[0].get_int(3), -1);
}

// Evaluate runs its expression: an out-of-bounds load inside it must be reported.
TEST(InterpreterTest, EvaluateEvaluates) {
  ir::Buffer a = ir::Buffer::make("A", DataType::f32(), {2});
  std::vector<HostTensor> args{HostTensor(DataType::f32(), {2})};
  run(make_func({input(a)}, ir::EvaluateNode::make(load(a, {1}))), args);
  EXPECT_THROW(run(make_func({input(a)}, ir::EvaluateNode::make(load(a, {2}))), args), UserError);
}

TEST(InterpreterTest, OutOfBoundsStoreNamesBufferIndicesAndStatement) {
  ir::Buffer b = ir::Buffer::make("Dst", DataType::f32(), {2, 3});
  Var i("i"), j("j");
  ir::PrimFunc f = make_func({output(b)}, loop(i, 2, loop(j, 4, store(b, ir::make_const(DataType::f32(), 1), {i, j}))));
  std::vector<HostTensor> args{HostTensor(DataType::f32(), {2, 3})};
  try {
    run(f, args);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("out-of-bounds store"), std::string::npos) << message;
    EXPECT_NE(message.find("Dst"), std::string::npos) << message;
    EXPECT_NE(message.find("[0, 3]"), std::string::npos) << message;
    EXPECT_NE(message.find("BufferStore"), std::string::npos) << message;
  }
}

TEST(InterpreterTest, OutOfBoundsLoadIsAUserErrorEvenForNegativeIndices) {
  ir::Buffer a = ir::Buffer::make("Src", DataType::f32(), {4});
  ir::Buffer b = ir::Buffer::make("B", DataType::f32(), {4});
  Var i("i");
  ir::PrimFunc f = make_func({input(a), output(b)}, loop(i, 4, store(b, load(a, {i - 1}), {i})));
  std::vector<HostTensor> args{HostTensor(DataType::f32(), {4}), HostTensor(DataType::f32(), {4})};
  try {
    run(f, args);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("out-of-bounds load from buffer Src at [-1]"), std::string::npos) << message;
  }
}

// Gathers: an index loaded from another buffer is checked like any other.
TEST(InterpreterTest, GatherIndicesAreBoundsChecked) {
  ir::Buffer idx = ir::Buffer::make("Idx", DataType::i64(), {3});
  ir::Buffer table = ir::Buffer::make("Table", DataType::f32(), {4});
  ir::Buffer out = ir::Buffer::make("Out", DataType::f32(), {3});
  Var i("i");
  ir::PrimFunc f =
      make_func({input(idx), input(table), output(out)}, loop(i, 3, store(out, load(table, {load(idx, {i})}), {i})));
  std::vector<HostTensor> args{tensor(DataType::i64(), {3}, {3, 0, 2}), tensor(DataType::f32(), {4}, {10, 11, 12, 13}),
                               HostTensor(DataType::f32(), {3})};
  run(f, args);
  EXPECT_EQ(args[2].get(0), 13);
  EXPECT_EQ(args[2].get(1), 10);
  EXPECT_EQ(args[2].get(2), 12);
  args[0].set_int(1, 4);
  EXPECT_THROW(run(f, args), UserError);
}

TEST(InterpreterTest, UnboundVariableIsAUserError) {
  ir::Buffer b = ir::Buffer::make("B", DataType::i32(), {4});
  Var i("i"), stray("stray");
  ir::PrimFunc f = make_func({output(b)}, loop(i, 4, store(b, stray, {i})));
  EXPECT_THROW(CompiledFunction::compile(f), UserError);
}

TEST(InterpreterTest, UndeclaredBufferIsAUserError) {
  ir::Buffer b = ir::Buffer::make("B", DataType::i32(), {4});
  ir::Buffer ghost = ir::Buffer::make("ghost", DataType::i32(), {4});
  Var i("i");
  ir::PrimFunc f = make_func({output(b)}, loop(i, 4, store(b, load(ghost, {i}), {i})));
  EXPECT_THROW(CompiledFunction::compile(f), UserError);
}

TEST(InterpreterTest, ArgumentsMustMatchParameters) {
  ir::Buffer b = ir::Buffer::make("B", DataType::f32(), {4});
  Var i("i");
  ir::PrimFunc f = make_func({output(b)}, loop(i, 4, store(b, ir::make_zero(DataType::f32()), {i})));
  std::vector<HostTensor> wrong_shape{HostTensor(DataType::f32(), {5})};
  EXPECT_THROW(run(f, wrong_shape), UserError);
  std::vector<HostTensor> wrong_type{HostTensor(DataType::f16(), {4})};
  EXPECT_THROW(run(f, wrong_type), UserError);
  std::vector<HostTensor> none;
  EXPECT_THROW(run(f, none), UserError);
}

TEST(InterpreterTest, VectorBuffersAreRejectedAsInternalErrors) {
  ir::Buffer v = ir::Buffer::make("V", DataType::f32().with_lanes(4), {4});
  ir::PrimFunc f = make_func({output(v)}, ir::EvaluateNode::make(0));
  EXPECT_THROW(CompiledFunction::compile(f), InternalError);
}

// acc = acc + x, the update of every reduction, rounds to the buffer's type at each step,
// whichever side the accumulator is on.
TEST(InterpreterTest, AccumulatingStoresRoundInTheirType) {
  ir::Buffer x = ir::Buffer::make("X", DataType::f16(), {4});
  ir::Buffer acc = ir::Buffer::make("Acc", DataType::f16(), {2});
  ir::Buffer m = ir::Buffer::make("M", DataType::f32(), {1});
  ir::Buffer fx = ir::Buffer::make("FX", DataType::f32(), {4});
  Var k("k"), j("j");
  ir::Stmt body = ir::SeqStmtNode::make({
      store(acc, ir::make_const(DataType::f16(), 1), {0}),
      store(acc, ir::make_const(DataType::f16(), 1), {1}),
      store(m, ir::make_const(DataType::f32(), -5), {0}),
      loop(k, 4,
           ir::SeqStmtNode::make(
               {store(acc, load(acc, {0}) + load(x, {k}), {0}), store(acc, load(x, {k}) + load(acc, {1}), {1})})),
      loop(j, 4, store(m, ir::max(load(m, {0}), load(fx, {j})), {0})),
  });
  ir::PrimFunc f = make_func({input(x), input(fx), output(acc), output(m)}, body);
  double e = std::ldexp(1.0, -11);
  std::vector<HostTensor> args{tensor(DataType::f16(), {4}, {e, e, e, e}),
                               tensor(DataType::f32(), {4}, {1, std::nan(""), 3, 2}), HostTensor(DataType::f16(), {2}),
                               HostTensor(DataType::f32(), {1})};
  run(f, args);
  EXPECT_EQ(args[2].get(0), 1.0);
  EXPECT_EQ(args[2].get(1), 1.0);
  EXPECT_EQ(args[3].get(0), 3.0);  // the NaN is skipped, as fmaxf does
}

// B[i + 1] = B[i] + 1 reads one element and writes the next: not an in-place update.
TEST(InterpreterTest, StoreOfANeighbourIsNotAnUpdateInPlace) {
  ir::Buffer b = ir::Buffer::make("B", DataType::f32(), {4});
  Var i("i");
  ir::Stmt body = ir::SeqStmtNode::make(
      {store(b, ir::make_zero(DataType::f32()), {0}), loop(i, 3, store(b, load(b, {i}) + 1.0f, {i + 1}))});
  std::vector<HostTensor> args{HostTensor(DataType::f32(), {4})};
  run(make_func({output(b)}, body), args);
  for (int64_t v = 0; v < 4; ++v) EXPECT_EQ(args[0].get(v), static_cast<double>(v));
}

// Index arithmetic over loop variables (folded into one node when affine) wraps in its type
// like every integer operation, and keeps the order-independent terms exact.
TEST(InterpreterTest, AffineIndexArithmeticWrapsInItsType) {
  ir::Buffer b = ir::Buffer::make("B", DataType::i32(), {2, 3});
  ir::Buffer w = ir::Buffer::make("W", DataType::i8(), {2});
  Var i("i"), j("j"), k("k", DataType::i8());
  ir::Stmt body = ir::SeqStmtNode::make({
      loop(i, 2, loop(j, 3, store(b, i * 2147483647 + i * 2 - j * 3 + (j - i) * 5 + 7, {i, j}))),
      ir::ForNode::make(k, ir::make_const(DataType::i8(), 0), ir::make_const(DataType::i8(), 2), ir::ForKind::kSerial,
                        store(w, k * ir::make_const(DataType::i8(), 100) + ir::make_const(DataType::i8(), 100), {k})),
  });
  std::vector<HostTensor> args{HostTensor(DataType::i32(), {2, 3}), HostTensor(DataType::i8(), {2})};
  run(make_func({output(b), output(w)}, body), args);
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < 3; ++c) {
      int64_t exact = r * 2147483647 + r * 2 - c * 3 + (c - r) * 5 + 7;
      EXPECT_EQ(args[0].get_int(r * 3 + c), static_cast<int32_t>(static_cast<uint32_t>(exact))) << r << ", " << c;
    }
  }
  EXPECT_EQ(args[1].get_int(0), 100);
  EXPECT_EQ(args[1].get_int(1), -56);  // 200 wraps in i8
}

TEST(InterpreterTest, LoopBoundsMayDependOnOuterLoops) {
  ir::Buffer b = ir::Buffer::make("B", DataType::i32(), {4, 4});
  Var i("i"), j("j");
  // Lower triangle including the diagonal: j in [0, i + 1).
  ir::Stmt body = loop(i, 4, ir::ForNode::make(j, 0, i + 1, ir::ForKind::kSerial, store(b, 1, {i, j})));
  std::vector<HostTensor> args{HostTensor(DataType::i32(), {4, 4})};
  run(make_func({output(b)}, body), args);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(args[0].get_int(r * 4 + c), c <= r ? 1 : 0) << r << ", " << c;
  }
}

}  // namespace
}  // namespace dragon::interp
