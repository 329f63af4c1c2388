// Generated CUDA for every op kind, under the default GPU schedule (AutoBind), compiles with NVRTC
// to an sm_90a CUBIN (no GPU needed). Skips, saying so, in a build without the toolkit.
#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/search/default_schedule.h"
#include "default_gpu_schedule.h"
#include "unit/schedule/random_trace.h"

namespace dragon::codegen {
namespace {

TEST(CudaCodegenOps, EveryOpKindCompilesToSm90aCubin) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  std::vector<std::string> specs = testing::default_op_specs();
  std::vector<ir::PrimFunc> flats;
  for (const std::string& spec : specs) {
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    flats.push_back(lower::lower(testing::default_gpu_schedule(w.func), lower::Target::cuda_h200()).func);
  }
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  std::vector<Expected<runtime::CudaBuild>> builds =
      runtime::compile_cuda_all(flats, lower::Target::cuda_h200(), options);
  ASSERT_EQ(builds.size(), specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i]);
    ASSERT_TRUE(builds[i].ok()) << builds[i].error().describe();
    const runtime::CudaBuild& b = builds[i].value();
    EXPECT_GT(b.cubin.bytes.size(), 0u);
    // An ELF image (a CUBIN), not PTX text.
    EXPECT_EQ(b.cubin.bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
    ASSERT_FALSE(b.source.kernels.empty());
    for (const KernelLaunch& k : b.source.kernels) {
      EXPECT_NE(b.source.code.find(k.name), std::string::npos);
      EXPECT_GE(k.threads_per_block(), 1);
      EXPECT_LE(k.threads_per_block(), 1024);
    }
  }
}

// A candidate that search drew on the H200 for KernelBench 9's shape scaled up (A holds
// 2^31 elements, so its indices are i64) with a vectorized cooperative fetch: code
// generation added the i32 lane offset to an i64 index ("Add of i64 and i32", an internal
// error) for 19 of its candidates. It builds now.
TEST(CudaCodegenOps, AVectorLoopOverABufferIndexedInI64Builds) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  const std::string spec = "matmul:m=2048,n=1,k=1048576,trans_a=false,trans_b=false,dtype=f32";
  const std::string script = R"(gb C
ann b0 tiling SSSRRSRS
gl b0 3
spt l0 5 64 = 2 1 1024 1 1
sp l0 v0 v1 v2 v3 v4
spt l1 5 64 = 1 1 1 1 1
sp l1 v5 v6 v7 v8 v9
spt l2 3 64 = 65536 16 1
sp l2 v10 v11 v12
ro l3 l8 l4 l9 l5 l10 l13 l14 l6 l11 l15 l7 l12
fu l3 l8
bind l16 bx
fu l4 l9
bind l17 vx
fu l5 l10
bind l18 tx
ann b0 tlow 32
ann b0 thigh 1024
cw b0 0 local
rca b1 l18
cr b0 0 shared b0
ca b2 l13
gl b2 6
fu l23 l24
sc [1 2 4] = 2
ann b2 coop v13
cr b0 1 shared b0
ca b3 l13
gl b3 6
fu l30 l31
sc [1 2 4] = 2
ann b3 coop v14
gb root
sc [0 16 64 512 1024] = 0
ann b4 unrollx v15
post
gb C
gl b5 10
dr b5 l36
gb A_shared
gl b7 5
sp l47 None 1024 4
bind l49 tx
vec l50
unann b7 coop
gb B_shared
gl b8 5
sp l55 None 1024 4
bind l57 tx
vec l58
unann b8 coop
gb root
gcb b9 5
gb C_init
gl b15 3
gb A_shared
gl b16 7
gb B_shared
gl b17 7
gb C
gl b18 10
gb C_local
gl b19 5
gb root
unann b20 unrollx
)";
  schedule::Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
  script::decode(script).apply_to(sch);
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  std::vector<Expected<runtime::CudaBuild>> builds = runtime::compile_cuda_all(
      {lower::lower(sch.func(), lower::Target::cuda_h200()).func}, lower::Target::cuda_h200(), options);
  ASSERT_EQ(builds.size(), 1u);
  ASSERT_TRUE(builds[0].ok()) << builds[0].error().describe();
  EXPECT_NE(builds[0].value().source.code.find("vectorized"), std::string::npos)
      << "the fetch into shared memory is still a vector copy:\n" << builds[0].value().source.code;
}

// A vectorized loop whose value selects a load (a padding) reads it lane by lane, only
// where the select chooses it: one vector load of all lanes read before the input's start
// (KernelBench 44's pad under the default schedule's 4 lanes: X[-4..-1], an illegal address
// that ended the bench's CUDA context). An unconditional load stays one vector load.
TEST(CudaCodegenOps, AVectorLoopLoadsWhatASelectGuardsLaneByLane) {
  const lower::Target target = lower::Target::cuda_h200();
  auto kernels = [&](const std::string& spec) {
    const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    return generate_cuda(lower::lower(search::default_schedule(func, target).func(), target).func, target).code;
  };
  const std::string pad = kernels("avg_pool1d:batch=2,channels=4,length=64,kernel=8,stride=1,padding=4");
  EXPECT_NE(pad.find("vectorized"), std::string::npos) << "the pad's nest is vectorized:\n" << pad;
  EXPECT_EQ(pad.find("*(const float4*)(X"), std::string::npos) << pad;
  const std::string relu = kernels("relu:shape=64x64");
  EXPECT_NE(relu.find("*(const float4*)(X"), std::string::npos) << relu;
}

}  // namespace
}  // namespace dragon::codegen

namespace dragon::codegen {
namespace {

// Random GPU-style schedules (shared and local caches, cooperative fetch, vectorize,
// unroll, several binds) of every op kind compile too; schedules that lowering refuses for
// the GPU (loops left unbound, limits) are counted, not failures.
TEST(CudaCodegenOps, RandomGpuSchedulesCompileToSm90aCubin) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)";
  schedule::testing::RandomTraceOptions options;
  options.style = schedule::testing::TargetStyle::kGpu;
  options.steps = 10;
  std::vector<std::string> labels;
  std::vector<ir::PrimFunc> flats;
  int refused = 0;
  uint64_t seed = 500;
  std::vector<std::string> specs = testing::default_op_specs();
  // Every third op kind keeps NVRTC's time (uncached, on a loaded machine) within bounds.
  for (size_t s = 0; s < specs.size(); s += 3) {
    const std::string& spec = specs[s];
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    ir::PrimFunc scheduled = schedule::testing::random_schedule(w.func, seed++, options).func();
    try {
      scheduled = testing::default_gpu_schedule(scheduled);
    } catch (const Error&) {
      // AutoBind refused (a ScheduleError): lowering decides below.
    }
    try {
      flats.push_back(lower::lower(scheduled, lower::Target::cuda_h200()).func);
      labels.push_back(spec + " seed " + std::to_string(seed - 1));
    } catch (const UserError&) {
      ++refused;
    }
  }
  runtime::BuildOptions build_options;
  build_options.cache = &testing::test_cache();
  auto builds = runtime::compile_cuda_all(flats, lower::Target::cuda_h200(), build_options);
  for (size_t i = 0; i < builds.size(); ++i) {
    EXPECT_TRUE(builds[i].ok()) << labels[i] << ": " << builds[i].error().describe();
  }
  std::printf("random GPU schedules: %zu compiled, %d refused by lowering\n", flats.size(), refused);
  EXPECT_GE(flats.size(), 8u);
}

}  // namespace
}  // namespace dragon::codegen
