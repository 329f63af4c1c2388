// The CUDA path up to the device: a .cu kernel compiles with NVRTC (no GPU needed), a
// compile error is the run's kFailed with NVRTC's log, an entry the CUBIN lacks fails at
// compile time (its symbol table read here), and a bad launch shape is refused.
#include <gtest/gtest.h>

#include <algorithm>

#include "dragon/harness/isolated_candidate.h"
#include "dragon/runtime/cubin_symbols.h"
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

// The symbol table names the entries: extern "C" kernels by their names, C++ kernels
// mangled; device functions and variables are not kernels.
TEST(IsolatedCudaCompile, CubinSymbolTableListsTheKernelsOnly) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  const std::string source = R"(
    extern "C" __device__ __noinline__ float twice(float x) { return 2 * x; }
    __device__ float table[16];
    extern "C" __global__ void first(const float* x, float* y) { y[threadIdx.x] = twice(x[threadIdx.x]) + table[0]; }
    __global__ void second(float* y) { y[0] = 1; }
    extern "C" __global__ void third(float* y) { y[0] = 2; }
  )";
  Expected<runtime::Cubin> cubin =
      runtime::nvrtc_compile(source, "symbols.cu", test_options().nvrtc, *test_options().cache);
  ASSERT_TRUE(cubin.ok()) << cubin.error().describe();
  Expected<std::vector<std::string>> names = runtime::cubin_kernel_names(cubin.value().bytes);
  ASSERT_TRUE(names.ok()) << names.error().describe();
  std::vector<std::string> sorted = names.value();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::string>{"_Z6secondPf", "first", "third"}));
}

TEST(IsolatedCudaCompile, MalformedCubinIsAFailureNotACrash) {
  for (std::string bytes : {std::string(), std::string("not an elf"), std::string("\x7f" "ELF\x02\x01\x01", 7),
                            std::string("\x7f" "ELF\x01\x01\x01") + std::string(64, '\0')}) {
    Expected<std::vector<std::string>> names = runtime::cubin_kernel_names(bytes);
    ASSERT_FALSE(names.ok());
    EXPECT_NE(names.error().describe().find("not a well-formed CUBIN"), std::string::npos) << names.error().describe();
  }
}

// docs/kernel-calling-convention.md: an entry the compiled code lacks is a compile error,
// found without a GPU; the message lists the kernels there are.
TEST(IsolatedCudaCompile, EntryTheCubinLacksFailsAtCompileTime) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "this build has no NVRTC";
  IsolatedKernel kernel = read_isolated_kernel(kernel_path("relu.cu"), "nope");
  kernel.grid = {4, 1, 1};
  kernel.block = {256, 1, 1};
  Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, test_options());
  ASSERT_FALSE(compiled.ok());
  const std::string message = compiled.error().describe();
  EXPECT_NE(message.find("relu.cu has no kernel named 'nope' (its kernels: relu)"), std::string::npos) << message;
  // Through a candidate: every run's kFailed, nothing launched.
  std::vector<tensor::HostTensor> args = testing::relu_arguments();
  RunOutcome outcome = make_isolated_candidate(kernel, test_options())->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kFailed);
  EXPECT_NE(outcome.reason.find("no kernel named 'nope'"), std::string::npos) << outcome.reason;
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
