// On the GPU: what search makes runs and matches the interpreter on the device. The
// untuned default schedule of every problem of every suite at reduced shapes (with its
// thresholds, with thresholds low enough that every reduction is spread over threads,
// and low enough that most span blocks), candidates sampled from the design space of
// every op kind, and long f32 sums under the default schedule (across threads, and
// across blocks) within the harness's 1e-5 of the f64 reference.
// Without a device every test says [SKIP].
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "dragon/harness/f64_promotion.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/search/default_schedule.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/lower/lower_test_util.h"
#include "unit/search/search_test_sketches.h"
#include "unit/search/suite_workloads.h"

namespace dragon::search {
namespace {

// Reassociated sums (cross-thread trees, tiles) on top of the device's math library.
constexpr double kToleranceScale = 8;

#define DRAGON_REQUIRE_GPU()                                                                  \
  do {                                                                                        \
    Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();                       \
    if (!driver.ok()) GTEST_SKIP() << "[SKIP] no CUDA device: " << driver.error().describe(); \
  } while (0)

::testing::AssertionResult runs_like_interpreter(const std::string& label, const ir::PrimFunc& original,
                                                 const ir::PrimFunc& scheduled) {
  runtime::BuildOptions options;
  options.cache = &codegen::testing::test_cache();
  auto exe = runtime::build(scheduled, lower::Target::cuda_h200(), options);
  if (!exe.ok()) return ::testing::AssertionFailure() << label << ": " << exe.error().describe();
  std::vector<tensor::HostTensor> args = interp::make_arguments(original, 13, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> reference = args;
  interp::run(original, reference);
  Status status = exe.value()->run(args);
  if (!status.ok()) return ::testing::AssertionFailure() << label << ": " << status.error().describe();
  ::testing::AssertionResult match = codegen::testing::outputs_match(original, reference, args, kToleranceScale);
  if (!match) return ::testing::AssertionFailure() << label << ": " << match.message();
  return ::testing::AssertionSuccess();
}

TEST(GpuDesignSpace, TheDefaultScheduleOfEveryProblemOfEverySuiteMatchesTheInterpreter) {
  DRAGON_REQUIRE_GPU();
  DefaultScheduleOptions across;
  across.serial_reduction_limit = 2;
  across.terms_per_thread = 2;
  // Low enough that most reductions span blocks (partial sums, then a write-back).
  DefaultScheduleOptions spanning = across;
  spanning.max_reduction_threads = 8;
  spanning.max_terms_per_thread = 4;
  int checked = 0;
  for (const testing::SuiteWorkload& w : testing::suite_workloads()) {
    ir::PrimFunc func = ops::OpRegistry::global().make_workload(w.reduced_spec).func;
    for (const DefaultScheduleOptions& options : {DefaultScheduleOptions{}, across, spanning}) {
      ir::PrimFunc scheduled = default_schedule(func, lower::Target::cuda_h200(), options).func();
      EXPECT_TRUE(runs_like_interpreter(w.label + " " + w.reduced_spec, func, scheduled));
      ++checked;
    }
  }
  std::printf("%d default-scheduled problems ran on the device\n", checked);
}

TEST(GpuDesignSpace, SampledCandidatesOfEveryOpKindMatchTheInterpreter) {
  DRAGON_REQUIRE_GPU();
  const lower::Target target = lower::Target::cuda_h200();
  int ran = 0;
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) {
    ir::PrimFunc func = lower::testing::small_workload(op, 12);
    std::vector<Sketch> sketches = generate_design_space(func, target, RuleSet::cuda());
    for (int n = 0; n < 3; ++n) {
      CandidateResult r = sample_candidate(sketches[static_cast<size_t>(n) % sketches.size()], func, target,
                                           RuleSet::cuda(), 100 + n);
      if (!r.ok()) continue;
      EXPECT_TRUE(runs_like_interpreter(op.name + " candidate " + std::to_string(n) + "\n" +
                                            r.candidate().trace.to_string(),
                                        func, r.candidate().func));
      ++ran;
    }
  }
  std::printf("%d sampled candidates ran on the device\n", ran);
  EXPECT_GT(ran, 150);
}

// Samples `seeds` candidates of each sketch in which `rule` applied to `spec` and runs each
// on the device against the interpreter; returns how many ran (0 sketches fail the test).
int run_sketches_of_rule(const char* spec, const std::string& rule, uint64_t seeds) {
  const lower::Target target = lower::Target::cuda_h200();
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const std::vector<Sketch> sketches = testing::sketches_of_rule(func, RuleSet::cuda(), rule);
  EXPECT_FALSE(sketches.empty()) << spec << ": no sketch of " << rule;
  int ran = 0;
  for (const Sketch& sketch : sketches) {
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      CandidateResult r = sample_candidate(sketch, func, target, RuleSet::cuda(), seed);
      EXPECT_TRUE(r.ok()) << spec << ": " << (r.ok() ? "" : r.failure().message);
      if (!r.ok()) continue;
      EXPECT_TRUE(runs_like_interpreter(std::string(spec) + "\n" + r.candidate().trace.to_string(), func,
                                        r.candidate().func));
      ++ran;
    }
  }
  return ran;
}

// The tensor-core rule's 16-bit tiles staged by columns (ldmatrix .trans of an A stored
// [k, m], of a B stored [k, n] into the fragment a _trans_b mma reads): a transposed A,
// the NCHW input of a 1x1 convolution of one image, a padded GEMM's [k, n] B,
// against the interpreter.
TEST(GpuDesignSpace, TensorCoreTilesStagedByColumnsMatchTheInterpreter) {
  DRAGON_REQUIRE_GPU();
  int ran = 0;
  for (const char* spec : {"matmul:m=128,n=64,k=256,trans_a=true,dtype=f16",
                           "conv2d:batch=1,in_channels=32,out_channels=32,size=10x10,kernel=1x1,dtype=bf16",
                           "matmul:m=100,n=60,k=72,dtype=f16"}) {
    ran += run_sketches_of_rule(spec, "multi_level_tiling_tensor_core", 3);
  }
  std::printf("%d candidates staged by columns ran on the device\n", ran);
  EXPECT_GT(ran, 0);
}

// staged_scan's sketches (input staged; input and output staged) of every scan kind run on
// the device as on the interpreter: the shared tiles' barriers and the running value
// carried across chunks in a register, with rows and chunks over several blocks.
TEST(GpuDesignSpace, StagedScansOfEveryScanKindMatchTheInterpreter) {
  DRAGON_REQUIRE_GPU();
  int ran = 0;
  for (const char* spec : {"cumsum:shape=256x384,dim=1", "cumsum:shape=256x384,dim=1,reverse=true",
                           "cumsum:shape=256x384,dim=1,exclusive=true", "cumprod:shape=256x384,dim=1",
                           "masked_cumsum:shape=256x384,dim=1", "cumsum:shape=4x64x384,dim=2"}) {
    ran += run_sketches_of_rule(spec, "staged_scan", 4);
  }
  std::printf("%d staged scan candidates ran on the device\n", ran);
  EXPECT_EQ(ran, 6 * 2 * 4);
}

// chunked_scan's sketch of every scan kind with few, long rows (the chunk totals spread
// over threads, the carries, the scan again inside each chunk, its running value carried
// under a partial last chunk's guard) at sampled chunk lengths, on the device as on the
// interpreter; chunks that do not divide the axis included, and DLRM R11 at full size.
TEST(GpuDesignSpace, ChunkedScansOfFewLongRowsMatchTheInterpreter) {
  DRAGON_REQUIRE_GPU();
  int ran = 0;
  for (const char* spec : {"cumsum:shape=2x20000,dim=1", "cumsum:shape=2x20000,dim=1,reverse=true",
                           "cumsum:shape=2x20000,dim=1,exclusive=true", "masked_cumsum:shape=3x9001,dim=1",
                           "cumprod:shape=2x9000,dim=1",
                           "lengths_to_offsets:batch=212992,max_len=12,include_total=true,index_dtype=i32"}) {
    ran += run_sketches_of_rule(spec, "chunked_scan", 4);
  }
  std::printf("%d chunked scan candidates ran on the device\n", ran);
  EXPECT_GE(ran, 6 * 4);
}

// The normalized error (max |error| / max |reference|) of the default schedule of `spec`
// on the device, on uniform [0, 1) inputs, against the f64 twin on the interpreter.
double device_error_against_f64(const std::string& spec) {
  ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  ir::PrimFunc scheduled = default_schedule(func, lower::Target::cuda_h200()).func();
  auto exe = runtime::build(scheduled, lower::Target::cuda_h200());
  EXPECT_TRUE(exe.ok()) << exe.error().describe();
  if (!exe.ok()) return INFINITY;
  std::vector<tensor::HostTensor> args = interp::make_arguments(func, 3, interp::Distribution::kRand);
  ir::PrimFunc twin = harness::promote_floats_to_f64(func);
  std::vector<tensor::HostTensor> twin_args;
  for (size_t i = 0; i < args.size(); ++i) {
    tensor::HostTensor t(twin->params[i].buffer->dtype, args[i].shape());
    for (int64_t e = 0; e < t.num_elements(); ++e) t.set(e, args[i].get(e));
    twin_args.push_back(std::move(t));
  }
  interp::run(twin, twin_args);
  EXPECT_TRUE(exe.value()->run(args).ok());
  size_t o = func->params.size() - 1;
  double scale = 0, error = 0;
  for (int64_t e = 0; e < args[o].num_elements(); ++e) {
    scale = std::max(scale, std::fabs(twin_args[o].get(e)));
    error = std::max(error, std::fabs(twin_args[o].get(e) - args[o].get(e)));
  }
  return error / scale;
}

TEST(GpuDesignSpace, ALongF32SumUnderTheDefaultScheduleMeetsTheHarnessFloor) {
  DRAGON_REQUIRE_GPU();
  // KernelBench's problem 4 shape class: 2^22 terms per output.
  double error = device_error_against_f64("mean:shape=4x4194304,axis=1");
  std::printf("normalized error of a 2^22-term f32 mean on the device: %.3g\n", error);
  EXPECT_LT(error, 1e-5);
}

TEST(GpuDesignSpace, SumsSpanningBlocksMeetTheHarnessFloor) {
  DRAGON_REQUIRE_GPU();
  // 2^25 terms a sum: too many for one block's 1024 threads (32768 each), so the default
  // schedule spans blocks (partial sums, then a write-back); KernelBench 37, 94 and 96
  // (2^30 and more) at a size the interpreter's f64 reference computes in seconds.
  for (const char* spec : {"mean:shape=2x33554432,axis=1", "frobenius_norm:shape=2x64x512x512",
                           "mse_loss:shape=8192x4096", "smooth_l1_loss:shape=8192x4096,beta=1"}) {
    double error = device_error_against_f64(spec);
    std::printf("%-40s normalized error on the device against f64: %.3g\n", spec, error);
    EXPECT_LT(error, 1e-5) << spec;
  }
}

}  // namespace
}  // namespace dragon::search
