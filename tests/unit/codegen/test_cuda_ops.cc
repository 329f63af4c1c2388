// Generated CUDA for every op kind, under the default GPU schedule (AutoBind), compiles with NVRTC
// to an sm_90a CUBIN (no GPU needed). Skips, saying so, in a build without the toolkit.
#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
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
