// The cuDNN baseline on a GPU: every plan kind (convolutions forward and transposed, 1D to
// 3D, grouped, depthwise, dilated, with a bias; max and average pooling; softmax and
// log_softmax) run by cuDNN on the device against our interpreter on the same inputs, and
// a suite run that carries cuDNN rows. Skips without a GPU or without a loadable cuDNN
// (DRAGON_CUDNN_LIBRARY names it where it is not on the loader's path).
#include <gtest/gtest.h>

#include <vector>

#include "dragon/bench/cudnn_api.h"
#include "dragon/bench/cudnn_baseline.h"
#include "dragon/bench/suite_run.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/ops/op_registry.h"
#include "dragon/suites/suite.h"
#include "gpu_test_support.h"

namespace dragon::bench {
namespace {

#define REQUIRE_GPU_AND_CUDNN(driver) \
  REQUIRE_GPU(driver);                \
  if (!cudnn_api().error.empty()) GTEST_SKIP() << "[SKIP] cuDNN cannot be loaded: " << cudnn_api().error

// Runs `spec`'s cuDNN baseline on interpreter-drawn inputs and compares its output (the
// function's last parameter) with the interpreter's.
void expect_cudnn_matches_interpreter(runtime::CudaDriver* driver, const std::string& spec) {
  SCOPED_TRACE(spec);
  ops::Workload w = ops::OpRegistry::global().make_workload(spec);
  std::string why_not;
  std::unique_ptr<CudnnBaseline> baseline = make_cudnn_baseline(w, why_not);
  ASSERT_NE(baseline, nullptr) << why_not;
  EXPECT_EQ(baseline->name().rfind("cudnn", 0), 0u) << baseline->name();
  std::vector<tensor::HostTensor> args = interp::make_arguments(w.func, 11, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> expected = args;
  interp::run(w.func, expected);
  gpu_test::DeviceArguments device(driver, args);
  const std::vector<runtime::DevicePtr>& ptrs = device.ptrs;
  // The output starts as NaN bytes: an element cuDNN never writes shows.
  const size_t y = args.size() - 1;
  ASSERT_TRUE(driver->fill_bytes(ptrs[y], 0xff, static_cast<size_t>(args[y].size_bytes())).ok());
  Status ran = baseline->run(ptrs);
  ASSERT_TRUE(ran.ok()) << baseline->name() << ": " << ran.error().describe();
  ASSERT_TRUE(driver->synchronize().ok());
  tensor::HostTensor got = args[y];
  ASSERT_TRUE(driver->copy_to_host(got.data(), ptrs[y], static_cast<size_t>(got.size_bytes())).ok());
  interp::TensorComparison c = interp::compare_tensors(expected[y], got, 4 * interp::reordering_tolerance(got.dtype()));
  EXPECT_TRUE(c.ok) << baseline->name() << ": " << interp::describe(c, expected[y], got);
}

TEST(GpuCudnn, ConvolutionsMatchTheInterpreter) {
  REQUIRE_GPU_AND_CUDNN(driver);
  for (const char* spec : {
           "conv2d:batch=2,in_channels=8,out_channels=16,size=16x16,kernel=3x3,stride=2x2,padding=1x1,bias=true",
           "conv2d:batch=2,in_channels=8,out_channels=12,size=12x12,kernel=3x3,groups=4",
           "conv2d:batch=2,in_channels=8,out_channels=8,size=16x16,kernel=3x5,padding=1x2,dilation=2x1,groups=8",
           "conv2d:batch=2,in_channels=8,out_channels=16,size=16x16,kernel=1x1",
           "conv1d:batch=2,in_channels=4,out_channels=8,size=64,kernel=3,stride=3,dilation=4",
           "conv3d:batch=1,in_channels=4,out_channels=8,size=6x8x10,kernel=3x3x5,padding=1x1x0",
           "conv2d:batch=2,in_channels=8,out_channels=16,size=16x16,kernel=3x3,dtype=f16",
       }) {
    expect_cudnn_matches_interpreter(driver, spec);
  }
}

TEST(GpuCudnn, TransposedConvolutionsMatchTheInterpreter) {
  REQUIRE_GPU_AND_CUDNN(driver);
  for (const char* spec : {
           "conv_transpose2d:batch=2,in_channels=8,out_channels=8,size=8x8,kernel=3x3,stride=2x2,padding=1x1,"
           "output_padding=1x1,groups=2",
           "conv_transpose2d:batch=2,in_channels=4,out_channels=8,size=6x10,kernel=3x5,stride=2x3,padding=1x2,"
           "dilation=2x1,bias=true",
           "conv_transpose1d:batch=2,in_channels=4,out_channels=8,size=32,kernel=3,stride=2,padding=1,dilation=2",
           "conv_transpose3d:batch=1,in_channels=4,out_channels=4,size=4x6x8,kernel=3x3x3,stride=2x2x2,"
           "padding=1x1x1,groups=2",
       }) {
    expect_cudnn_matches_interpreter(driver, spec);
  }
}

TEST(GpuCudnn, PoolingMatchesTheInterpreter) {
  REQUIRE_GPU_AND_CUDNN(driver);
  for (const char* spec : {
           "max_pool2d:batch=2,channels=4,height=16,width=16,kernel=3,stride=2,padding=1",
           "max_pool1d:batch=2,channels=4,length=64,kernel=4,stride=1,padding=2",
           "max_pool3d:batch=1,channels=2,depth=8,height=8,width=8,kernel=2,stride=2",
           "avg_pool2d:batch=2,channels=4,height=16,width=16,kernel=3,stride=2,padding=1",
           "avg_pool2d:batch=2,channels=4,height=16,width=16,kernel=3,stride=2,padding=1,count_include_pad=false",
           "avg_pool1d:batch=2,channels=4,length=64,kernel=8,stride=1,padding=4",
           "avg_pool3d:batch=1,channels=2,depth=8,height=8,width=8,kernel=3,stride=2,padding=1",
       }) {
    expect_cudnn_matches_interpreter(driver, spec);
  }
}

TEST(GpuCudnn, SoftmaxAndLogSoftmaxMatchTheInterpreter) {
  REQUIRE_GPU_AND_CUDNN(driver);
  for (const char* spec : {"softmax:shape=16x1024,axis=1", "log_softmax:shape=16x1024,axis=1",
                           "softmax:shape=4x5x6,axis=1", "log_softmax:shape=4x5x6,axis=0",
                           "softmax:shape=8x300,axis=-1,dtype=bf16"}) {
    expect_cudnn_matches_interpreter(driver, spec);
  }
}

TEST(GpuCudnn, AnF32ConvolutionRunsInFmaMathWithAChosenAlgorithm) {
  REQUIRE_GPU_AND_CUDNN(driver);
  std::string why_not;
  std::unique_ptr<CudnnBaseline> conv =
      make_cudnn_baseline(ops::OpRegistry::global().make_workload("conv2d"), why_not);
  ASSERT_NE(conv, nullptr) << why_not;
  EXPECT_NE(conv->name().find("FMA math"), std::string::npos) << conv->name();
  EXPECT_NE(conv->name().find("algo "), std::string::npos) << conv->name();
}

// The models suite's pooling problems carry a cuDNN row that is checked and timed.
TEST(GpuCudnn, ASuiteRunCarriesCudnnBaselines) {
  REQUIRE_GPU_AND_CUDNN(driver);
  suites::Suite suite = suites::load_suite("models", DRAGON_SOURCE_DIR "/bench/suites");
  SuiteRunOptions options;
  options.problems = "R2,R7";
  options.eager = false;  // the cuDNN row alone is under test
  options.timer.max_seconds = 0.2;
  SuiteRun run = run_suite(suite, options);
  ASSERT_EQ(run.problems.size(), 2u);
  for (const ProblemResult& p : run.problems) {
    SCOPED_TRACE(p.id);
    const Contender* cudnn = nullptr;
    for (const Contender& b : p.baselines) {
      if (b.name.rfind("cudnn", 0) == 0) cudnn = &b;
    }
    ASSERT_NE(cudnn, nullptr) << "no cuDNN baseline";
    EXPECT_EQ(cudnn->status, "ok") << cudnn->name << ": " << cudnn->error;
    ASSERT_TRUE(cudnn->time.has_value());
    EXPECT_GT(cudnn->time->median_ms, 0);
  }
  options.cudnn = false;
  options.problems = "R2";
  SuiteRun without = run_suite(suite, options);
  ASSERT_EQ(without.problems.size(), 1u);
  for (const Contender& b : without.problems[0].baselines) EXPECT_NE(b.name.rfind("cudnn", 0), 0u) << b.name;
}

}  // namespace
}  // namespace dragon::bench
