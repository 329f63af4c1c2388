// The CUDA path up to the device: a .cu kernel compiles with NVRTC (no GPU needed), a
// compile error is the run's kFailed with NVRTC's log, and a bad launch shape is refused.
#include <gtest/gtest.h>

#include "dragon/harness/isolated_candidate.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "isolation_test_util.h"

namespace dragon::harness {
namespace {

using testing::kernel_path;
using testing::test_options;

TEST(IsolatedCudaCompile, KernelFileCompilesToACubin) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  IsolatedKernel kernel = read_isolated_kernel(kernel_path("relu.cu"), "relu");
  kernel.grid = {4, 1, 1};
  kernel.block = {256, 1, 1};
  Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, test_options());
  ASSERT_TRUE(compiled.ok()) << compiled.error().describe();
  EXPECT_EQ(compiled.value().language, KernelLanguage::kCuda);
  EXPECT_EQ(compiled.value().cubin.substr(0, 4), (std::string{'\x7f', 'E', 'L', 'F'}));  // an ELF image
  EXPECT_EQ(compiled.value().grid, kernel.grid);
  EXPECT_EQ(compiled.value().block, kernel.block);
}

// The CUDA example of docs/kernel-calling-convention.md compiles as written there.
TEST(IsolatedCudaCompile, DocumentedExampleCompiles) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  IsolatedKernel kernel = read_isolated_kernel(kernel_path("matmul.cu"), "matmul");
  kernel.grid = {2, 4, 1};
  kernel.block = {16, 16, 1};
  Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, test_options());
  ASSERT_TRUE(compiled.ok()) << compiled.error().describe();
}

// Generated CUDA code follows the same convention (one pointer per parameter, extern "C").
TEST(IsolatedCudaCompile, GeneratedKernelCompilesAsItIs) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  IsolatedKernel generated = read_isolated_kernel(
      std::string(DRAGON_SOURCE_DIR) + "/tests/golden/codegen/relu_cuda_float4.cu", "relu_kernel0");
  generated.grid = {1, 1, 1};
  generated.block = {256, 1, 1};
  Expected<CompiledKernel> compiled = compile_isolated_kernel(generated, test_options());
  ASSERT_TRUE(compiled.ok()) << compiled.error().describe();
  EXPECT_FALSE(compiled.value().cubin.empty());
}

TEST(IsolatedCudaCompile, CompileErrorIsAFailureWithNvrtcsLog) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  std::unique_ptr<Candidate> candidate =
      make_isolated_candidate(read_isolated_kernel(kernel_path("compile_error.cu"), "compile_error"), test_options());
  std::vector<tensor::HostTensor> args = {tensor::HostTensor(ir::DataType::f32(), {32})};
  RunOutcome outcome = candidate->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kFailed);
  EXPECT_NE(outcome.reason.find("compile_error.cu"), std::string::npos) << outcome.reason;
  EXPECT_NE(outcome.reason.find("undeclared_value"), std::string::npos) << outcome.reason;
}

TEST(IsolatedCudaCompile, LaunchShapeMustBePositive) {
  IsolatedKernel kernel = read_isolated_kernel(kernel_path("relu.cu"), "relu");
  kernel.block = {0, 1, 1};
  Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, test_options());
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.error().describe().find("must be positive"), std::string::npos);
}

}  // namespace
}  // namespace dragon::harness
