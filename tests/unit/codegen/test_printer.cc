// The printers on hand-written flat IR: integer semantics (floordiv, floormod, truncating
// div and mod, wrapping, saturating casts, select), 16-bit floats rounding like
// support/half.h, math intrinsics, compiled and compared with the interpreter; and the
// CUDA emitter's structure (kernels, launch configuration, shared memory, barriers,
// vector accesses, the tensor_intrin extension point), compiled with NVRTC.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "codegen_test_util.h"
#include "dragon/codegen/cpu_codegen.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/build.h"
#include "dragon/support/half.h"

namespace dragon::codegen {
namespace {

using ir::Buffer;
using ir::DataType;
using ir::Expr;
using ir::ForKind;
using ir::Stmt;
using ir::Var;

constexpr int64_t kN = 512;

// out[i] = f(a[i], b[i]) over n elements, in the flat form.
ir::PrimFunc elementwise(const std::string& name, DataType in, DataType out_type,
                         const std::function<Expr(Expr, Expr)>& f, int64_t n = kN) {
  Buffer a = Buffer::make("a", in, {n});
  Buffer b = Buffer::make("b", in, {n});
  Buffer out = Buffer::make("out", out_type, {n});
  Var i("i");
  Stmt body = ir::ForNode::make(i, 0, static_cast<int>(n), ForKind::kSerial,
                                ir::BufferStoreNode::make(out, f(ir::BufferLoadNode::make(a, {i}),
                                                                 ir::BufferLoadNode::make(b, {i})), {i}));
  return ir::PrimFunc::make(name, {{a, ir::ParamRole::kInput, {}}, {b, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}},
                            body);
}

// Compiles every function into one shared object and compares each with the interpreter
// on `fill`-ed inputs, exactly (tolerance 0).
void expect_exact(const std::vector<ir::PrimFunc>& funcs,
                  const std::function<void(std::vector<tensor::HostTensor>&)>& fill) {
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  auto executables = runtime::build_cpu_batch(funcs, options);
  for (size_t f = 0; f < funcs.size(); ++f) {
    SCOPED_TRACE(funcs[f]->name);
    ASSERT_TRUE(executables[f].ok()) << executables[f].error().describe();
    std::vector<tensor::HostTensor> args;
    for (const ir::Param& p : funcs[f]->params) args.push_back(tensor::HostTensor::like(p.buffer));
    fill(args);
    std::vector<tensor::HostTensor> reference = args;
    interp::run(funcs[f], reference);
    ASSERT_TRUE(executables[f].value()->run(args).ok());
    EXPECT_TRUE(testing::outputs_match(funcs[f], reference, args, 0.0));
  }
}

TEST(CPrinter, IntegerSemanticsMatchInterpreter) {
  auto nonzero = [](Expr b) { return ir::select(ir::eq(b, 0), ir::make_const(b.dtype(), 7), b); };
  std::vector<ir::PrimFunc> funcs;
  for (DataType t : {DataType::i32(), DataType::i64(), DataType::i8()}) {
    std::string s = ir::to_string(t);
    funcs.push_back(elementwise("floordiv_" + s, t, t, [&](Expr a, Expr b) { return ir::floordiv(a, nonzero(b)); }));
    funcs.push_back(elementwise("floormod_" + s, t, t, [&](Expr a, Expr b) { return ir::floormod(a, nonzero(b)); }));
    funcs.push_back(elementwise("truncdiv_" + s, t, t, [&](Expr a, Expr b) { return ir::truncdiv(a, nonzero(b)); }));
    funcs.push_back(elementwise("truncmod_" + s, t, t, [&](Expr a, Expr b) { return ir::truncmod(a, nonzero(b)); }));
    funcs.push_back(elementwise("minmax_" + s, t, t, [](Expr a, Expr b) { return ir::min(a, b) * 3 - ir::max(a, b); }));
    funcs.push_back(elementwise("select_" + s, t, t, [](Expr a, Expr b) {
      return ir::select((a < b && !ir::eq(a, b)) || b > 5, a * b, a - b);
    }));
    funcs.push_back(elementwise("abs_" + s, t, t, [](Expr a, Expr b) { return ir::abs(a) + b; }));
  }
  // i8 arithmetic wraps in 8 bits, also in the middle of an expression.
  funcs.push_back(elementwise("wrap_i8", DataType::i8(), DataType::i8(),
                              [](Expr a, Expr b) { return ir::truncdiv(a * b * 3, ir::make_const(DataType::i8(), 5)); }));
  expect_exact(funcs, [](std::vector<tensor::HostTensor>& args) {
    for (int64_t i = 0; i < kN; ++i) {
      int64_t lo = args[0].dtype().bits() == 8 ? -128 : -1000;
      args[0].set_int(i, lo + (i * 37) % (2 * -lo));
      args[1].set_int(i, (i * 11) % 19 - 9);
    }
  });
}

TEST(CPrinter, CastsMatchInterpreter) {
  std::vector<ir::PrimFunc> funcs;
  for (DataType to : {DataType::i8(), DataType::i32(), DataType::i64(), DataType::boolean(), DataType::f16(),
                      DataType::bf16(), DataType::f32()}) {
    funcs.push_back(elementwise("cast_f64_to_" + ir::to_string(to), DataType::f64(), to,
                                [&](Expr a, Expr) { return ir::cast(to, a); }));
    funcs.push_back(elementwise("cast_f32_to_" + ir::to_string(to), DataType::f64(), to,
                                [&](Expr a, Expr) { return ir::cast(to, ir::cast(DataType::f32(), a)); }));
  }
  // Through 16-bit floats and back, and from integers.
  funcs.push_back(elementwise("f16_roundtrip", DataType::f64(), DataType::f64(), [](Expr a, Expr) {
    return ir::cast(DataType::f64(), ir::cast(DataType::f16(), a));
  }));
  funcs.push_back(elementwise("bf16_from_f16", DataType::f64(), DataType::bf16(), [](Expr a, Expr) {
    return ir::cast(DataType::bf16(), ir::cast(DataType::f16(), a));
  }));
  funcs.push_back(elementwise("i64_to_f16", DataType::f64(), DataType::f16(), [](Expr a, Expr) {
    return ir::cast(DataType::f16(), ir::cast(DataType::i64(), a));
  }));
  // Values that stress rounding: f16 and bf16 halfway points, overflow, subnormals, NaN, Inf.
  expect_exact(funcs, [](std::vector<tensor::HostTensor>& args) {
    std::vector<double> values = {0.0, -0.0, 1.0, -1.5, 65504.0, 65519.99, 65520.0, 1e6, -1e6, 3e38, 1e39,
                                  std::ldexp(1.0, -24), std::ldexp(1.5, -24), std::ldexp(1.0, -25),
                                  std::ldexp(3.0, -26), 2147483647.5, -2147483649.0, 1e19, -1e19, 127.9, -128.5,
                                  200.0, NAN, INFINITY, -INFINITY};
    for (int64_t i = 0; i < kN; ++i) {
      double v;
      if (i < static_cast<int64_t>(values.size())) {
        v = values[i];
      } else if (i % 2 == 0) {
        // Exactly halfway between two f16 values (odd multiples of half an ulp).
        int e = static_cast<int>(i % 40) - 20;
        v = std::ldexp(1024.0 + static_cast<double>(i % 1024) + 0.5, e - 10) * (i % 4 == 0 ? 1 : -1);
      } else {
        int e = static_cast<int>(i % 60) - 30;
        v = std::ldexp(1.0 + std::fmod(i * 0.6180339887, 1.0), e) * (i % 3 == 0 ? -1 : 1);
      }
      args[0].set(i, v);
    }
  });
}

TEST(CPrinter, HalfArithmeticAndMathIntrinsicsMatchInterpreter) {
  std::vector<ir::PrimFunc> funcs;
  for (DataType t : {DataType::f16(), DataType::bf16()}) {
    std::string s = ir::to_string(t);
    funcs.push_back(elementwise("arith_" + s, t, t, [](Expr a, Expr b) { return (a * b + a) / (b - 3.0); }));
    funcs.push_back(elementwise("minmax_" + s, t, t, [](Expr a, Expr b) { return ir::max(ir::min(a, b), a * 0.5); }));
    funcs.push_back(elementwise("compare_" + s, t, DataType::boolean(), [](Expr a, Expr b) { return a <= b; }));
  }
  expect_exact(funcs, [](std::vector<tensor::HostTensor>& args) {
    for (int64_t i = 0; i < kN; ++i) {
      args[0].set(i, std::sin(i * 0.37) * 40);
      args[1].set(i, std::cos(i * 0.11) * 7);
    }
  });
  // Math functions: the C library's float functions may differ from the interpreter's
  // double-then-round in the last bit, so these compare within the f32 tolerance.
  std::vector<ir::PrimFunc> math;
  using Unary = Expr (*)(Expr);
  std::vector<std::pair<std::string, Unary>> unary = {
      {"exp", ir::exp},     {"exp2", ir::exp2},   {"expm1", ir::expm1}, {"log", ir::log},   {"log2", ir::log2},
      {"log1p", ir::log1p}, {"sqrt", ir::sqrt},   {"rsqrt", ir::rsqrt}, {"sin", ir::sin},   {"cos", ir::cos},
      {"tanh", ir::tanh},   {"erf", ir::erf},     {"floor", ir::floor}, {"ceil", ir::ceil}, {"round", ir::round},
      {"trunc", ir::trunc}, {"abs", ir::abs}};
  for (DataType t : {DataType::f32(), DataType::f64(), DataType::f16()}) {
    for (const auto& [name, fn] : unary) {
      math.push_back(elementwise(name + "_" + ir::to_string(t), t, t, [fn](Expr a, Expr) { return fn(ir::abs(a)); }));
    }
    math.push_back(elementwise("pow_" + ir::to_string(t), t, t, [](Expr a, Expr b) { return ir::pow(ir::abs(a), b); }));
    math.push_back(elementwise("isnan_" + ir::to_string(t), t, DataType::boolean(),
                               [](Expr a, Expr b) { return ir::isnan(ir::log(a)) || ir::isinf(ir::log(b * 0.0)); }));
  }
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  auto executables = runtime::build_cpu_batch(math, options);
  for (size_t f = 0; f < math.size(); ++f) {
    SCOPED_TRACE(math[f]->name);
    ASSERT_TRUE(executables[f].ok()) << executables[f].error().describe();
    std::vector<tensor::HostTensor> args = interp::make_arguments(math[f], 3, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> reference = args;
    interp::run(math[f], reference);
    ASSERT_TRUE(executables[f].value()->run(args).ok());
    EXPECT_TRUE(testing::outputs_match(math[f], reference, args));
  }
}

// A guarded gather: the loads' and the store's computed indices are declared before the
// `if` (so that unrolled neighbours share their terms), an index that reads memory stays
// under the guard, and the results are those of the interpreter.
TEST(CPrinter, GuardedCopiesDeclareTheirIndicesBeforeTheGuard) {
  const int64_t n = 512;
  Buffer a = Buffer::make("a", DataType::f32(), {n});
  Buffer idx = Buffer::make("idx", DataType::i32(), {n});
  Buffer out = Buffer::make("out", DataType::f32(), {2 * n});
  Var i("i");
  Expr gathered = ir::BufferLoadNode::make(a, {ir::floormod(i * 7 + 3, n)});
  Expr indirect = ir::BufferLoadNode::make(a, {ir::floormod(ir::BufferLoadNode::make(idx, {i}), n)});
  Stmt guarded = ir::SeqStmtNode::make({
      ir::IfThenElseNode::make(i < 500, ir::BufferStoreNode::make(out, gathered, {i * 2 + 1})),
      ir::IfThenElseNode::make(i >= 500, ir::BufferStoreNode::make(out, indirect, {i * 2 + 1})),
      ir::IfThenElseNode::make(i < 3, ir::BufferStoreNode::make(out, ir::make_const(DataType::f32(), 1), {i * 2})),
  });
  ir::PrimFunc f = ir::PrimFunc::make(
      "guarded_gather",
      {{a, ir::ParamRole::kInput, {}}, {idx, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}},
      ir::ForNode::make(i, 0, static_cast<int>(n), ForKind::kSerial, guarded));
  const std::string code = generate_cpu(f).code;
  const size_t gather_index = code.find("const auto");
  const size_t first_guard = code.find("if ((i < 500))");
  ASSERT_NE(gather_index, std::string::npos) << code;
  ASSERT_NE(first_guard, std::string::npos) << code;
  EXPECT_LT(gather_index, first_guard) << code;
  EXPECT_NE(code.find("a[vdragon_index]"), std::string::npos) << code;
  // The indirect index and the constant's store stay as they were, under their guards.
  EXPECT_NE(code.find("a[dragon_floormod(idx[i], 512)]"), std::string::npos) << code;
  const size_t indirect_guard = code.find("if ((i >= 500))");
  ASSERT_NE(indirect_guard, std::string::npos) << code;
  EXPECT_EQ(code.find("const auto", indirect_guard), std::string::npos) << code;
  expect_exact({f}, [](std::vector<tensor::HostTensor>& args) {
    for (int64_t k = 0; k < 512; ++k) {
      args[0].set(k, 0.25 * static_cast<double>(k % 61) - 7.0);
      args[1].set_int(k, (k * 37) % 1000 - 300);
    }
    args[2].fill(0.0);
  });
}

TEST(CPrinter, RejectsBlockIr) {
  Buffer a = Buffer::make("a", DataType::f32(), {4});
  ir::Block block = ir::BlockNode::make("b", {}, {}, {}, ir::BufferStoreNode::make(a, ir::make_const(DataType::f32(), 1), {0}));
  ir::PrimFunc f = ir::PrimFunc::make("f", {{a, ir::ParamRole::kOutput, {}}},
                                      ir::BlockRealizeNode::make({}, ir::make_bool(true), block));
  EXPECT_THROW(generate_cpu(f), InternalError);
  EXPECT_THROW(generate_cuda(f, lower::Target::cuda_h200()), UserError);
}

// ---- CUDA structure -----------------------------------------------------------------------

// One kernel: blockIdx.x over `blocks`, threadIdx.x over `threads`, the given body.
Stmt kernel(Var bx, int64_t blocks, Var tx, int64_t threads, Stmt body) {
  return ir::ForNode::make(bx, 0, static_cast<int>(blocks), ForKind::kThreadBinding,
                           ir::ForNode::make(tx, 0, static_cast<int>(threads), ForKind::kThreadBinding, body,
                                             "threadIdx.x"),
                           "blockIdx.x");
}

Expected<runtime::Cubin> nvrtc(const CudaSource& source) {
  return runtime::nvrtc_compile(source.code, "test.cu", {}, testing::test_cache());
}

// The test's last check: NVRTC compiles `source` (skipped, saying so, without NVRTC).
void expect_compiles(const CudaSource& source) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] no NVRTC in this build";
  auto cubin = nvrtc(source);
  EXPECT_TRUE(cubin.ok()) << cubin.error().describe() << "\n" << source.code;
}

TEST(CudaEmitter, SharedMemoryBarriersAndLaunchConfiguration) {
  // out[b*256 + t] = shared[255 - t], with a 64 KB shared buffer (dynamic, opted in).
  Buffer in = Buffer::make("in", DataType::f32(), {4 * 256});
  Buffer out = Buffer::make("out", DataType::f32(), {4 * 256});
  Buffer tile = Buffer::make("tile", DataType::f32(), {16384}, "shared");
  Var bx("bx"), tx("tx");
  Stmt body = ir::AllocateNode::make(
      tile, ir::SeqStmtNode::make({
                ir::BufferStoreNode::make(tile, ir::BufferLoadNode::make(in, {bx * 256 + tx}), {tx}),
                ir::EvaluateNode::make(ir::CallNode::make(ir::Intrinsic::SyncThreads, {})),
                ir::BufferStoreNode::make(out, ir::BufferLoadNode::make(tile, {255 - tx}), {bx * 256 + tx}),
            }));
  ir::PrimFunc f = ir::PrimFunc::make("reverse", {{in, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}},
                                      kernel(bx, 4, tx, 256, body));
  CudaSource source = generate_cuda(f, lower::Target::cuda_h200());
  ASSERT_EQ(source.kernels.size(), 1u);
  const KernelLaunch& k = source.kernels[0];
  EXPECT_EQ(k.grid, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(k.block, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(k.dynamic_shared_bytes, 16384 * 4);
  EXPECT_EQ(k.args, (std::vector<KernelArg>{{KernelArg::Kind::kParam, 0}, {KernelArg::Kind::kParam, 1}}));
  EXPECT_NE(source.code.find("__launch_bounds__(256)"), std::string::npos);
  EXPECT_NE(source.code.find("__syncthreads();"), std::string::npos);
  EXPECT_NE(source.code.find("extern __shared__"), std::string::npos);
  EXPECT_NE(source.code.find("const float* __restrict__ in"), std::string::npos);
  expect_compiles(source);
}

TEST(CudaEmitter, KernelsAndWorkspacesOfTheFlatForm) {
  // Two kernels through a global workspace: tmp = in * 2; out = tmp + 1, 100 of 128 threads.
  Buffer in = Buffer::make("in", DataType::f32(), {100});
  Buffer out = Buffer::make("out", DataType::f32(), {100});
  Buffer tmp = Buffer::make("tmp", DataType::f32(), {100}, "global");
  Var b1("b"), t1("t"), b2("b"), t2("t");
  auto guarded = [](Var t, Stmt s) { return ir::IfThenElseNode::make(t < 100, s); };
  Stmt first = kernel(b1, 1, t1, 128, guarded(t1, ir::BufferStoreNode::make(tmp, ir::BufferLoadNode::make(in, {t1}) * 2.0, {t1})));
  Stmt second = kernel(b2, 1, t2, 128, guarded(t2, ir::BufferStoreNode::make(out, ir::BufferLoadNode::make(tmp, {t2}) + 1.0, {t2})));
  ir::PrimFunc f = ir::PrimFunc::make("two", {{in, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}},
                                      ir::AllocateNode::make(tmp, ir::SeqStmtNode::make({first, second})));
  CudaSource source = generate_cuda(f, lower::Target::cuda_h200());
  ASSERT_EQ(source.kernels.size(), 2u);
  ASSERT_EQ(source.workspaces.size(), 1u);
  EXPECT_EQ(source.workspaces[0].bytes, 400);
  EXPECT_EQ(source.kernels[0].args,
            (std::vector<KernelArg>{{KernelArg::Kind::kParam, 0}, {KernelArg::Kind::kWorkspace, 0}}));
  EXPECT_EQ(source.kernels[1].args,
            (std::vector<KernelArg>{{KernelArg::Kind::kParam, 1}, {KernelArg::Kind::kWorkspace, 0}}));
  EXPECT_EQ(source.kernels[0].name, "two_kernel0");
  EXPECT_EQ(source.kernels[1].name, "two_kernel1");
  expect_compiles(source);
}

// out[b*64 + t*4 + v] = a[...] * 2 + c[b] with v vectorized over `lanes` at `offset`.
CudaSource vector_kernel(DataType dtype, int lanes, int offset) {
  Buffer a = Buffer::make("a", dtype, {4096});
  Buffer c = Buffer::make("c", dtype, {64});
  Buffer out = Buffer::make("out", dtype, {4096});
  Var bx("bx"), tx("tx"), v("v");
  Expr index = bx * 64 + tx * lanes + v + offset;
  Stmt store = ir::BufferStoreNode::make(
      out, ir::BufferLoadNode::make(a, {index}) * ir::make_const(dtype, 2) + ir::BufferLoadNode::make(c, {bx}), {index});
  Stmt loop = ir::ForNode::make(v, 0, lanes, ForKind::kVectorized, store);
  ir::PrimFunc f = ir::PrimFunc::make(
      "vec", {{a, ir::ParamRole::kInput, {}}, {c, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}},
      kernel(bx, 8, tx, 64 / lanes, loop));
  return generate_cuda(f, lower::Target::cuda_h200());
}

TEST(CudaEmitter, VectorizedContiguousAlignedLoopsUseVectorAccesses) {
  struct Expectation {
    DataType dtype;
    int lanes;
    std::string vector;
  };
  for (const Expectation& e : {Expectation{DataType::f32(), 4, "float4"}, Expectation{DataType::f32(), 2, "float2"},
                               Expectation{DataType::f16(), 2, "__half2"}, Expectation{DataType::f16(), 8, "int4"},
                               Expectation{DataType::bf16(), 4, "int2"}}) {
    SCOPED_TRACE(ir::to_string(e.dtype) + " x" + std::to_string(e.lanes));
    CudaSource aligned = vector_kernel(e.dtype, e.lanes, 0);
    EXPECT_NE(aligned.code.find("*(" + e.vector + "*)(out + "), std::string::npos) << aligned.code;
    EXPECT_NE(aligned.code.find("*(const " + e.vector + "*)(a + "), std::string::npos) << aligned.code;
    // One element off: not provably aligned, so scalar accesses.
    CudaSource unaligned = vector_kernel(e.dtype, e.lanes, 1);
    EXPECT_EQ(unaligned.code.find(e.vector + "*"), std::string::npos) << unaligned.code;
    EXPECT_NE(unaligned.code.find("#pragma unroll"), std::string::npos);
    if (!runtime::nvrtc_available()) continue;
    for (const CudaSource* s : {&aligned, &unaligned}) {
      auto cubin = nvrtc(*s);
      EXPECT_TRUE(cubin.ok()) << cubin.error().describe() << "\n" << s->code;
    }
  }
}

// Buffers past 2^31 elements, `rows` rows of 4096 floats, indexed in i64 as lowering
// indexes them (flatten_buffers): each dimension's index stays i32 under a cast.
constexpr int64_t kWideCols = 4096;
constexpr int64_t kWideRows = int64_t{1} << 19;  // 2^31 elements

Expr i64(const Expr& e) { return ir::cast(DataType::i64(), e); }

// out[index] = a[index] * 2 + c[bx]: blockIdx.x over `rows`, threadIdx.x over 1024, each
// thread's 4 floats a loop vectorized over v.
CudaSource wide_vector_kernel(int64_t rows, const std::function<Expr(Var bx, Var tx, Var v)>& index_of) {
  Buffer a = Buffer::make("a", DataType::f32(), {rows * kWideCols});
  Buffer c = Buffer::make("c", DataType::f32(), {rows});
  Buffer out = Buffer::make("out", DataType::f32(), {rows * kWideCols});
  Var bx("bx"), tx("tx"), v("v");
  Expr index = index_of(bx, tx, v);
  Stmt store = ir::BufferStoreNode::make(
      out, ir::BufferLoadNode::make(a, {index}) * 2.0 + ir::BufferLoadNode::make(c, {bx}), {index});
  ir::PrimFunc f = ir::PrimFunc::make(
      "wide", {{a, ir::ParamRole::kInput, {}}, {c, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}},
      kernel(bx, rows, tx, kWideCols / 4, ir::ForNode::make(v, 0, 4, ForKind::kVectorized, store)));
  return generate_cuda(f, lower::Target::cuda_h200());
}

// The lane offset and the alignment sit under the casts, where the analyzer alone does not
// look: the vector loop reads through them (index_widening.h) wherever each i32 index
// provably stays inside i32, so an elementwise op of 2^31 floats keeps its float4 accesses.
TEST(CudaEmitter, VectorLoopsOverABufferPast2To31ElementsUseVectorAccesses) {
  // The row index and the column index (holding the lane) each under a cast.
  CudaSource rows_and_columns = wide_vector_kernel(kWideRows, [](Var bx, Var tx, Var v) {
    return i64(bx) * kWideCols + i64(tx * 4 + v);
  });
  // The whole flat index under one cast, where it fits (2^30 elements).
  CudaSource whole = wide_vector_kernel(kWideRows / 2, [](Var bx, Var tx, Var v) {
    return i64(bx * static_cast<int>(kWideCols) + tx * 4 + v);
  });
  for (const CudaSource* s : {&rows_and_columns, &whole}) {
    EXPECT_NE(s->code.find("*(float4*)(out + "), std::string::npos) << s->code;
    EXPECT_NE(s->code.find("*(const float4*)(a + "), std::string::npos) << s->code;
    if (!runtime::nvrtc_available()) continue;
    auto cubin = nvrtc(*s);
    EXPECT_TRUE(cubin.ok()) << cubin.error().describe() << "\n" << s->code;
  }
}

// The reading through a cast rests on a proof: an i32 index holding the lane that might
// wrap (bx * 4096 reaches 2^32 over 2^20 rows) is left under its cast, and its accesses
// stay scalar.
TEST(CudaEmitter, AVectorLoopWhoseI32IndexMightWrapStaysScalar) {
  CudaSource s = wide_vector_kernel(kWideRows * 2, [](Var bx, Var tx, Var v) {
    return i64(bx * static_cast<int>(kWideCols) + tx * 4 + v);
  });
  EXPECT_EQ(s.code.find("float4*"), std::string::npos) << s.code;
  EXPECT_NE(s.code.find("#pragma unroll"), std::string::npos) << s.code;
  expect_compiles(s);
}

// Under async_copy, a vectorized copy from a global buffer past 2^31 elements into shared
// memory is one 16-byte cp.async, its source read through the casts like any vector load.
TEST(CudaEmitter, AnAsyncCopyFromABufferPast2To31ElementsIsOneCpAsync) {
  Buffer a = Buffer::make("a", DataType::f32(), {kWideRows * kWideCols});
  Buffer out = Buffer::make("out", DataType::f32(), {kWideRows * kWideCols});
  Buffer tile = Buffer::make("tile", DataType::f32(), {kWideCols}, "shared");
  Var bx("bx"), tx("tx"), step("step"), v("v"), w("w");
  auto global = [&](const Var& lane) { return i64(bx) * kWideCols + i64(tx * 4 + lane); };
  Stmt fetch = ir::ForNode::make(
      step, 0, 1, ForKind::kSerial,
      ir::ForNode::make(v, 0, 4, ForKind::kVectorized,
                        ir::BufferStoreNode::make(tile, ir::BufferLoadNode::make(a, {global(v)}), {tx * 4 + v})),
      {}, {{std::string(lower::kAsyncCopyAnnotation), int64_t{1}}});
  Stmt body = ir::AllocateNode::make(
      tile, ir::SeqStmtNode::make({
                fetch,
                ir::EvaluateNode::make(ir::CallNode::make(ir::Intrinsic::AsyncCommitGroup, {})),
                ir::EvaluateNode::make(
                    ir::CallNode::make(ir::Intrinsic::AsyncWaitGroup, {ir::make_const(DataType::i32(), 0)})),
                ir::ForNode::make(
                    w, 0, 4, ForKind::kVectorized,
                    ir::BufferStoreNode::make(out, ir::BufferLoadNode::make(tile, {tx * 4 + w}), {global(w)})),
            }));
  ir::PrimFunc f = ir::PrimFunc::make("wide_fetch", {{a, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}},
                                      kernel(bx, kWideRows, tx, kWideCols / 4, body));
  CudaSource s = generate_cuda(f, lower::Target::cuda_h200());
  EXPECT_NE(s.code.find("dragon_cp_async_16(tile + "), std::string::npos) << s.code;
  EXPECT_NE(s.code.find("*(float4*)(out + "), std::string::npos) << s.code;
  expect_compiles(s);
}

TEST(CudaEmitter, TensorIntrinBlocksWithoutAPrinterStayScalar) {
  Buffer out = Buffer::make("out", DataType::f32(), {32});
  Var bx("bx"), tx("tx"), u("u");
  Stmt unit = ir::ForNode::make(u, 0, 1, ForKind::kSerial,
                                ir::BufferStoreNode::make(out, ir::make_const(DataType::f32(), 1), {tx}), {},
                                {{"tensor_intrin", std::string("mma_sync_m16n8k16_f16f16f32")}});
  ir::PrimFunc f = ir::PrimFunc::make("mma", {{out, ir::ParamRole::kOutput, {}}}, kernel(bx, 1, tx, 32, unit));
  CudaSource source = generate_cuda(f, lower::Target::cuda_h200());
  EXPECT_NE(source.code.find("// tensor_intrin mma_sync_m16n8k16_f16f16f32: scalar code (no warp-level printer"),
            std::string::npos);
  EXPECT_NE(source.code.find("out[tx] = 0x1p+0f;"), std::string::npos) << source.code;
}

}  // namespace
}  // namespace dragon::codegen
