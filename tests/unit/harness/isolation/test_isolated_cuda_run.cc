// CUDA kernels run in the runner child on the GPU (label gpu; [SKIP] without a device): an
// honest relu's outputs come back, an illegal address is a crash and the next run works.
#include <gtest/gtest.h>

#include <cmath>

#include "dragon/harness/isolated_candidate.h"
#include "dragon/runtime/cuda_driver.h"
#include "isolation_test_util.h"

namespace dragon::harness {
namespace {

using testing::kernel_path;
using testing::relu_arguments;
using testing::test_options;

std::unique_ptr<Candidate> cuda_candidate(const std::string& file, const std::string& entry) {
  IsolatedKernel kernel = read_isolated_kernel(kernel_path(file), entry);
  kernel.grid = {4, 1, 1};
  kernel.block = {256, 1, 1};
  IsolationOptions options = test_options();
  options.timeout = std::chrono::milliseconds(20000);  // a CUDA context takes a while to create
  return make_isolated_candidate(std::move(kernel), options);
}

TEST(IsolatedCudaRun, HonestKernelWritesCorrectOutputs) {
  if (!runtime::cuda_device_available()) GTEST_SKIP() << "no CUDA device: isolated CUDA runs not tested";
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = cuda_candidate("relu.cu", "relu")->run(args);
  ASSERT_TRUE(outcome.ok()) << outcome.reason;
  for (int64_t i = 0; i < args[0].num_elements(); ++i) ASSERT_EQ(args[1].get(i), std::max(args[0].get(i), 0.0));
}

// The documented example: a 2-D grid of 2-D blocks, three pointers in parameter order.
TEST(IsolatedCudaRun, DocumentedMatmulExampleIsCorrect) {
  if (!runtime::cuda_device_available()) GTEST_SKIP() << "no CUDA device: isolated CUDA runs not tested";
  IsolatedKernel kernel = read_isolated_kernel(kernel_path("matmul.cu"), "matmul");
  kernel.grid = {2, 4, 1};
  kernel.block = {16, 16, 1};
  IsolationOptions options = test_options();
  options.timeout = std::chrono::milliseconds(20000);
  std::vector<tensor::HostTensor> args = {tensor::HostTensor(ir::DataType::f32(), {64, 16}),
                                          tensor::HostTensor(ir::DataType::f32(), {16, 32}),
                                          tensor::HostTensor(ir::DataType::f32(), {64, 32})};
  for (int64_t i = 0; i < args[0].num_elements(); ++i) args[0].set(i, static_cast<double>(i % 13) / 4 - 1.5);
  for (int64_t i = 0; i < args[1].num_elements(); ++i) args[1].set(i, static_cast<double>(i % 11) / 8 - 0.6);
  args[2].fill(std::nan(""));
  RunOutcome outcome = make_isolated_candidate(kernel, options)->run(args);
  ASSERT_TRUE(outcome.ok()) << outcome.reason;
  for (int64_t m = 0; m < 64; ++m) {
    for (int64_t n = 0; n < 32; ++n) {
      double expected = 0;
      for (int64_t k = 0; k < 16; ++k) expected += args[0].get(m * 16 + k) * args[1].get(k * 32 + n);
      ASSERT_NEAR(args[2].get(m * 32 + n), expected, 1e-4 * (1 + std::abs(expected))) << m << ", " << n;
    }
  }
}

TEST(IsolatedCudaRun, IllegalAddressIsACrashAndTheNextRunWorks) {
  if (!runtime::cuda_device_available()) GTEST_SKIP() << "no CUDA device: isolated CUDA runs not tested";
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = cuda_candidate("illegal_address.cu", "illegal_address")->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kCrashed);
  EXPECT_NE(outcome.reason.find("CUDA_ERROR_"), std::string::npos) << outcome.reason;
  for (int64_t i = 0; i < args[1].num_elements(); ++i) ASSERT_TRUE(std::isnan(args[1].get(i)));
  ASSERT_TRUE(cuda_candidate("relu.cu", "relu")->run(args).ok());
}

}  // namespace
}  // namespace dragon::harness
