// dragon bench's device parts on a GPU: the input filler's distributions, the comparison
// kernels on known data, the cuBLAS GEMMs against the interpreter for every operand layout,
// peaks, and a small suite run end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dragon/bench/cublas_gemm.h"
#include "dragon/bench/device_comparison.h"
#include "dragon/bench/device_filler.h"
#include "dragon/bench/eager_plugin.h"
#include "dragon/bench/peaks.h"
#include "dragon/bench/suite_run.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/ops/op_registry.h"
#include "dragon/suites/suite.h"
#include "gpu_test_support.h"

namespace dragon::bench {
namespace {

using gpu_test::DeviceCopy;

TEST(GpuBench, FillerDrawsTorchRandAndNormalValues) {
  REQUIRE_GPU(driver);
  DeviceFiller filler(driver);
  const int64_t n = 1 << 20;
  std::vector<float> host(n);
  DeviceCopy buffer(driver, host.data(), n * sizeof(float));
  for (auto distribution : {DeviceFiller::Distribution::kUniform01, DeviceFiller::Distribution::kNormal}) {
    filler.fill(buffer.ptr, ir::DataType::f32(), n, distribution, 42);
    ASSERT_TRUE(driver->copy_to_host(host.data(), buffer.ptr, n * sizeof(float)).ok());
    double sum = 0, squares = 0, lo = INFINITY, hi = -INFINITY;
    for (float v : host) {
      sum += v;
      squares += static_cast<double>(v) * v;
      lo = std::min<double>(lo, v);
      hi = std::max<double>(hi, v);
    }
    double mean = sum / n, variance = squares / n - mean * mean;
    if (distribution == DeviceFiller::Distribution::kUniform01) {
      EXPECT_NEAR(mean, 0.5, 0.005);
      EXPECT_NEAR(variance, 1.0 / 12, 0.002);
      EXPECT_GE(lo, 0.0);
      EXPECT_LT(hi, 1.0);
    } else {
      EXPECT_NEAR(mean, 0.0, 0.01);
      EXPECT_NEAR(variance, 1.0, 0.01);
    }
  }
}

TEST(GpuBench, ComparisonKernelsOnKnownData) {
  REQUIRE_GPU(driver);
  DeviceComparer comparer(driver);
  std::vector<float> actual = {1, 2, NAN, 4, -8};
  std::vector<double> reference = {1, 2.5, 3, 4, -8};
  DeviceCopy a(driver, actual.data(), actual.size() * sizeof(float));
  DeviceCopy r(driver, reference.data(), reference.size() * sizeof(double));
  DeviceComparison c = comparer.compare(a.ptr, ir::DataType::f32(), r.ptr, 5);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(c.reference_scale, 8);
  EXPECT_EQ(c.nonfinite_mismatches, 1);
  EXPECT_TRUE(std::isinf(c.normalized_error()));
  // allclose at atol = rtol = 0.1: element 1 (0.5 > 0.35) and the NaN fail.
  EXPECT_EQ(comparer.count_not_close(a.ptr, ir::DataType::f32(), r.ptr, 5, 0.1, 0.1), 2);
  EXPECT_EQ(comparer.count_not_close(r.ptr, ir::DataType::f64(), r.ptr, 5, 0, 0), 0);
  EXPECT_DOUBLE_EQ(comparer.sum(r.ptr, 5), 2.5);
  std::vector<double> widened(5);
  DeviceCopy w(driver, widened.data(), widened.size() * sizeof(double));
  comparer.widen(a.ptr, ir::DataType::f32(), w.ptr, 5);
  ASSERT_TRUE(driver->copy_to_host(widened.data(), w.ptr, 5 * sizeof(double)).ok());
  EXPECT_EQ(widened[4], -8.0);
  EXPECT_TRUE(std::isnan(widened[2]));
}

TEST(GpuBench, CublasGemmsMatchTheInterpreterForEveryOperandLayout) {
  REQUIRE_GPU(driver);
  for (const char* spec : {"matmul:m=64,n=48,k=32", "matmul:m=64,n=48,k=32,trans_a=true",
                           "matmul:m=64,n=48,k=32,trans_b=true", "matmul:m=64,n=48,k=32,trans_a=true,trans_b=true",
                           "matmul:m=64,n=48,k=32,dtype=f16", "batch_matmul:batch=3x2,m=16,n=24,k=8",
                           "batch_matmul:batch=4,m=16,n=24,k=8,broadcast_b=true,trans_a=true"}) {
    SCOPED_TRACE(spec);
    ops::Workload w = ops::OpRegistry::global().make_workload(spec);
    std::string why_not;
    std::unique_ptr<CublasGemm> gemm = make_cublas_gemm(w, why_not);
    ASSERT_NE(gemm, nullptr) << why_not;
    std::vector<tensor::HostTensor> args = interp::make_arguments(w.func, 5, interp::Distribution::kNormal);
    std::vector<tensor::HostTensor> expected = args;
    interp::run(w.func, expected);
    gpu_test::DeviceArguments device(driver, args);
    const std::vector<runtime::DevicePtr>& ptrs = device.ptrs;
    ASSERT_TRUE(gemm->run(ptrs).ok());
    tensor::HostTensor got = args[2];
    ASSERT_TRUE(driver->copy_to_host(got.data(), ptrs[2], static_cast<size_t>(got.size_bytes())).ok());
    interp::TensorComparison c = interp::compare_tensors(expected[2], got, 4 * interp::reordering_tolerance(got.dtype()));
    EXPECT_TRUE(c.ok) << interp::describe(c, expected[2], got);
  }
  std::string why_not;
  EXPECT_EQ(make_cublas_gemm(ops::OpRegistry::global().make_workload("relu:shape=4x4"), why_not), nullptr);
  EXPECT_NE(why_not.find("matmul"), std::string::npos);
}

TEST(GpuBench, PeaksArePlausible) {
  REQUIRE_GPU(driver);
  PeakOptions options;
  options.copy_bytes = 256LL << 20;
  options.gemm_size = 2048;
  options.timer.max_seconds = 0.3;
  MeasuredPeaks peaks = measure_peaks(driver, options);
  EXPECT_GT(peaks.copy_bytes_per_s, 1e11) << peaks.to_text();
  EXPECT_GT(peaks.f32_flops_per_s, 1e12) << peaks.to_text();
  EXPECT_GT(peaks.f16_flops_per_s, peaks.f32_flops_per_s) << "tensor cores" << peaks.to_text();
  EXPECT_GT(peaks.l2_bytes, 0);
}

TEST(GpuBench, ASmallSuiteRunChecksAndTimesOursAndTheBaselines) {
  REQUIRE_GPU(driver);
  suites::Suite suite = suites::load_suite("models", DRAGON_SOURCE_DIR "/bench/suites");
  SuiteRunOptions options;
  options.problems = "D2,D3";
  options.timer.max_seconds = 0.2;
  SuiteRun run = run_suite(suite, options);
  ASSERT_EQ(run.problems.size(), 2u);
  for (const ProblemResult& p : run.problems) {
    SCOPED_TRACE(p.id + " " + p.message);
    EXPECT_EQ(p.status, "ok");
    ASSERT_TRUE(p.ours.time.has_value());
    EXPECT_GT(p.ours.time->median_ms, 0);
    EXPECT_FALSE(p.reference.empty());
    ASSERT_FALSE(p.ours.checks.empty());
    for (const OutputCheck& check : p.ours.checks) EXPECT_TRUE(check.ok) << check.detail;
    for (const Contender& b : p.baselines) EXPECT_EQ(b.status, "ok") << b.name << ": " << b.error;
  }
}

// A suite run allocates each problem's buffers itself, outside libtorch: memory libtorch's
// caching allocator kept from an earlier problem would make a later one run out (problems
// 38 and 39 of kernelbench-l1 need 43 GB). A finished computation hands its blocks back.
TEST(GpuBench, AnEagerComputationHandsItsCachedDeviceMemoryBack) {
  REQUIRE_GPU(driver);
  const EagerPlugin& plugin = eager_plugin();
  if (!plugin.baselines || !plugin.baselines->cuda_available()) {
    GTEST_SKIP() << "[SKIP] no libtorch eager plugin with CUDA: " << plugin.why_not;
  }
  const int64_t elements = int64_t{1} << 28;  // 1 GiB of f32 in, and as much out
  runtime::DevicePtr input = driver->allocate(elements * 4).value();
  ASSERT_TRUE(driver->fill_bytes(input, 0, elements * 4).ok());
  ASSERT_TRUE(driver->synchronize().ok());
  const size_t free_before = driver->memory_info().value().free_bytes;
  {
    std::vector<EagerTensor> inputs = {EagerTensor{reinterpret_cast<void*>(input), ir::DataType::f32(), {elements}}};
    std::unique_ptr<EagerComputation> relu =
        plugin.baselines->bind("relu", {{"shape", std::to_string(elements)}}, inputs, EagerDevice::kCuda, false);
    relu->run();
    relu->synchronize();
    EXPECT_LT(driver->memory_info().value().free_bytes + (size_t{1} << 29), free_before)
        << "the output should take about 1 GiB while the computation lives";
  }
  const size_t free_after = driver->memory_info().value().free_bytes;
  EXPECT_GE(free_after + (size_t{64} << 20), free_before)
      << "libtorch still holds " << (free_before - free_after) / (1 << 20) << " MiB after the computation ended";
  driver->release(input);
}

}  // namespace
}  // namespace dragon::bench
