// On the GPU: generated kernels of every op kind (default schedule: AutoBind), of random
// GPU-style schedules, of vectorized loops (float4, half2) and of a block using more than
// 48 KB of shared memory, of a grid too tall along y, and of the tensor-core GEMM sketch
// match the interpreter.
// Without a device every test says [SKIP].
#include <cstdio>
#include <gtest/gtest.h>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ir/op.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/script/script.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/support/file.h"
#include "interpreter_match.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/codegen/golden_cases.h"
#include "unit/codegen/default_gpu_schedule.h"
#include "unit/schedule/tensorcore_gemm_sketch.h"
#include "unit/schedule/random_trace.h"

namespace dragon::codegen {
namespace {

// The expert GPU scripts of data/scripts/expert/gpu/ whose splits do not depend on the
// problem size, at shapes the interpreter checks quickly: the benchmark compares them with
// libtorch at full size, this says whether a failure there is ours.
TEST(GpuOps, ExpertGpuScriptsAtSmallShapesMatchInterpreter) {
  DRAGON_REQUIRE_GPU();
  const std::string dir = std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gpu/";
  const std::pair<const char*, const char*> cases[] = {
      {"softmax_kb.script", "softmax:shape=4x4096,axis=1"},
      {"layer_norm_kb.script", "layer_norm:shape=2x64x32x64,normalized_dims=3,eps=1e-5"},
  };
  for (const auto& [file, spec] : cases) {
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    schedule::Schedule sch(w.func);
    script::decode(read_text_file(dir + file)).apply_to(sch);
    EXPECT_TRUE(runs_like_interpreter(std::string(file) + " on " + spec, w.func, sch.func(), kGpuToleranceScale));
  }
}

TEST(GpuOps, EveryOpKindMatchesInterpreter) {
  DRAGON_REQUIRE_GPU();
  for (const std::string& spec : testing::default_op_specs()) {
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    EXPECT_TRUE(runs_like_interpreter(spec, w.func, testing::default_gpu_schedule(w.func), kGpuToleranceScale));
  }
}

TEST(GpuOps, GoldenSchedulesMatchInterpreter) {
  DRAGON_REQUIRE_GPU();
  for (const testing::GoldenCase& c : testing::golden_cases()) {
    if (!c.cuda) continue;
    ops::Workload w = ops::OpRegistry::global().make_workload(c.spec);
    schedule::Schedule sch(w.func);
    c.make_script(sch);
    EXPECT_TRUE(runs_like_interpreter(c.name, w.func, sch.func(), kGpuToleranceScale));
  }
}

TEST(GpuOps, RandomGpuSchedulesMatchInterpreter) {
  DRAGON_REQUIRE_GPU();
  schedule::testing::RandomTraceOptions options;
  options.style = schedule::testing::TargetStyle::kGpu;
  options.steps = 10;
  struct Case {
    std::string label;
    ir::PrimFunc original, scheduled, flat;
    double tolerance_scale;
  };
  std::vector<Case> cases;
  int unlaunchable = 0;
  uint64_t seed = 500;
  for (const std::string& spec : testing::default_op_specs()) {
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    schedule::testing::RandomTraceStats stats;
    ir::PrimFunc scheduled = schedule::testing::random_schedule(w.func, seed++, options, &stats).func();
    // Random steps may leave loops unbound; AutoBind binds what is left, and we skip the
    // schedules lowering refuses for the GPU (a UserError naming the limit).
    try {
      scheduled = testing::default_gpu_schedule(scheduled);
    } catch (const Error&) {
    }
    try {
      ir::PrimFunc flat = lower::lower(scheduled, lower::Target::cuda_h200()).func;
      cases.push_back({spec + " seed " + std::to_string(seed - 1), w.func, scheduled, flat,
                       kGpuToleranceScale * (stats.reassociated ? 10 : 1)});
    } catch (const UserError&) {
      ++unlaunchable;
    }
  }
  // Compiled together on NVRTC's thread pool first; each run below then hits the cache.
  std::vector<ir::PrimFunc> flats;
  for (const Case& c : cases) flats.push_back(c.flat);
  runtime::BuildOptions build_options;
  build_options.cache = &testing::test_cache();
  auto builds = runtime::compile_cuda_all(flats, lower::Target::cuda_h200(), build_options);
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(builds[i].ok()) << cases[i].label << ": " << builds[i].error().describe();
  }
  for (const Case& c : cases) {
    // Named before it runs: if a kernel hangs, the log says which schedule it was.
    std::fprintf(stderr, "running %s\n", c.label.c_str());
    std::fflush(stderr);
    EXPECT_TRUE(runs_like_interpreter(c.label, c.original, c.scheduled, c.tolerance_scale));
  }
  std::printf("random GPU schedules: %zu ran, %d refused by lowering\n", cases.size(), unlaunchable);
  EXPECT_GT(cases.size(), 0u);
}

TEST(GpuKernels, SharedMemoryAbove48KbIsOptedIn) {
  DRAGON_REQUIRE_GPU();
  // out[b*256 + t] = in[b*256 + 255 - t] through a 64 KB shared buffer.
  ir::Buffer in = ir::Buffer::make("in", ir::DataType::f32(), {4 * 256});
  ir::Buffer out = ir::Buffer::make("out", ir::DataType::f32(), {4 * 256});
  ir::Buffer tile = ir::Buffer::make("tile", ir::DataType::f32(), {16384}, "shared");
  ir::Var bx("bx"), tx("tx");
  ir::Stmt body = ir::AllocateNode::make(
      tile, ir::SeqStmtNode::make({
                ir::BufferStoreNode::make(tile, ir::BufferLoadNode::make(in, {bx * 256 + tx}), {tx + 16000}),
                ir::EvaluateNode::make(ir::CallNode::make(ir::Intrinsic::SyncThreads, {})),
                ir::BufferStoreNode::make(out, ir::BufferLoadNode::make(tile, {16255 - tx}), {bx * 256 + tx}),
            }));
  ir::Stmt kernel = ir::ForNode::make(
      bx, 0, 4, ir::ForKind::kThreadBinding,
      ir::ForNode::make(tx, 0, 256, ir::ForKind::kThreadBinding, body, "threadIdx.x"), "blockIdx.x");
  ir::PrimFunc f = ir::PrimFunc::make("reverse", {{in, ir::ParamRole::kInput, {}}, {out, ir::ParamRole::kOutput, {}}}, kernel);
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  auto exe = runtime::build_lowered(f, lower::Target::cuda_h200(), options);
  ASSERT_TRUE(exe.ok()) << exe.error().describe();
  std::vector<tensor::HostTensor> args = interp::make_arguments(f, 3, interp::Distribution::kNormal);
  ASSERT_TRUE(exe.value()->run(args).ok());
  for (int64_t b = 0; b < 4; ++b) {
    for (int64_t t = 0; t < 256; ++t) ASSERT_EQ(args[1].get(b * 256 + t), args[0].get(b * 256 + 255 - t));
  }
}

// A grid of 70000 blocks along blockIdx.y (CUDA launches at most 65535 there) is folded
// into blockIdx.x by lowering: the kernel launches and computes the op.
TEST(GpuKernels, AGridTooTallAlongYIsFoldedIntoXAndRuns) {
  DRAGON_REQUIRE_GPU();
  ops::Workload w = ops::OpRegistry::global().make_workload("relu:shape=70000x32");
  schedule::Schedule sch(w.func);
  schedule::BlockRV b = sch.get_block("relu");
  std::vector<schedule::LoopRV> loops = sch.get_loops(b);
  sch.bind(loops[0], "blockIdx.y");
  sch.bind(loops[1], "threadIdx.x");
  EXPECT_TRUE(runs_like_interpreter("relu 70000 x 32", w.func, sch.func(), kGpuToleranceScale));
}

// The tensor-core GEMM sketch (ldmatrix, mma.sync m16n8k16, f32 accumulators) against the
// interpreter. f16/bf16 products are exact in f32 and the mma sums a tile's 16 products in
// an order of its own, so results differ by f32 reassociation only (a few ulps of a sum of
// 128 terms), then by at most one rounding of the f16/bf16 output: the GPU tolerance.
TEST(GpuOps, TensorCoreGemmMatchesInterpreter) {
  DRAGON_REQUIRE_GPU();
  for (const char* spec : {"matmul:m=128,n=128,k=128,dtype=f16", "matmul:m=128,n=128,k=128,dtype=bf16",
                           "matmul:m=128,n=128,k=128,trans_b=true,dtype=f16"}) {
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    for (bool cooperative : {false, true}) {
      schedule::Schedule sch = schedule::testing::tensorcore_gemm_sketch(spec);
      // Shared copies spread over the warps and lanes (threadIdx.x bound to the 32 lanes).
      if (cooperative) {
        ASSERT_EQ(search::rewrite_cooperative_fetch(sch), 2);
      }
      testing::apply_default_gpu_schedule(sch);  // the output cast the sketch leaves unbound
      EXPECT_TRUE(runs_like_interpreter(std::string(spec) + (cooperative ? " cooperative" : ""), w.func, sch.func(),
                                        kGpuToleranceScale));
    }
  }
}

}  // namespace
}  // namespace dragon::codegen
