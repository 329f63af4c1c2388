// The GPU timer on a real device: a kernel that spins for a known number of clock cycles
// is timed near that duration, every timed call gets its after-call, warm-up calls are
// told apart, and a kernel launched on device buffers through LoadedCudaFunction writes
// them in place. Skips without a device.
#include <gtest/gtest.h>

#include "dragon/harness/gpu_timer.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/runtime/nvrtc_compiler.h"

namespace dragon::harness {
namespace {

using runtime::CudaDriver;
using runtime::DevicePtr;

// Spins `cycles` SM clocks, then writes out[0] = 1 and counts its calls in out[1].
runtime::CudaBuild spin_build(long long cycles) {
  std::string code = R"(extern "C" __global__ void spin(float* out) {
  long long start = clock64();
  while (clock64() - start < )" + std::to_string(cycles) + R"(LL) {}
  if (threadIdx.x == 0) { out[0] = 1.0f; out[1] += 1.0f; }
}
)";
  Expected<runtime::Cubin> cubin =
      runtime::nvrtc_compile(code, "spin.cu", {}, runtime::CompileCache::global());
  EXPECT_TRUE(cubin.ok()) << (cubin.ok() ? "" : cubin.error().describe());
  codegen::KernelLaunch launch{.name = "spin", .grid = {1, 1, 1}, .block = {32, 1, 1}};
  launch.args.push_back(codegen::KernelArg{codegen::KernelArg::Kind::kParam, 0});
  runtime::CudaBuild build;
  build.source.code = code;
  build.source.kernels.push_back(launch);
  if (cubin.ok()) build.cubin = cubin.value();
  return build;
}

#define SKIP_WITHOUT_GPU()                                                                               \
  do {                                                                                                   \
    if (auto driver = CudaDriver::get(); !driver.ok())                                                   \
      GTEST_SKIP() << "[SKIP] no CUDA device: " << driver.error().describe();                            \
  } while (0)

TEST(GpuTimer, TimesASpinningKernelNearItsDuration) {
  SKIP_WITHOUT_GPU();
  CudaDriver* driver = CudaDriver::get().value();
  // About 1 ms at the H200's 1.98 GHz boost clock; up to ~2 ms at lower clocks.
  auto loaded = runtime::LoadedCudaFunction::load(spin_build(2'000'000));
  ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
  auto out = driver->allocate(2 * sizeof(float));
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(driver->fill_bytes(out.value(), 0, 2 * sizeof(float)));
  DevicePtr params[] = {out.value()};
  int warmups = 0, timed = 0, checked = 0;
  GpuTimerOptions options{.warmup_calls = 2, .min_calls = 10, .max_calls = 50, .max_seconds = 2.0};
  auto timing = time_gpu(
      [&](int i) -> Status {
        (i < 0 ? warmups : timed) += 1;
        return loaded.value()->launch(params);
      },
      options, [&](int i) -> Status {
        EXPECT_EQ(i, checked);
        ++checked;
        return {};
      });
  ASSERT_TRUE(timing.ok()) << timing.error().describe();
  EXPECT_EQ(warmups, 2);
  EXPECT_EQ(timed, static_cast<int>(timing.value().samples_ms.size()));
  EXPECT_EQ(checked, timed);
  EXPECT_GE(timed, 10);
  EXPECT_GT(timing.value().median_ms, 0.5) << timing.value().describe();
  EXPECT_LT(timing.value().median_ms, 4.0) << timing.value().describe();
  float host[2] = {};
  ASSERT_TRUE(driver->copy_to_host(host, out.value(), sizeof(host)));
  EXPECT_EQ(host[0], 1.0f);
  EXPECT_EQ(host[1], static_cast<float>(warmups + timed));  // every call ran, in place
  driver->release(out.value());
  std::printf("spin kernel: %s; %s\n", timing.value().describe().c_str(), read_gpu_state().describe().c_str());
}

TEST(GpuTimer, AFailingCallStopsTimingWithItsError) {
  SKIP_WITHOUT_GPU();
  int calls = 0;
  auto timing = time_gpu([&](int i) -> Status {
    ++calls;
    if (i == 3) return DRAGON_RUNTIME_FAILURE("candidate", "call 3 failed", "");
    return {};
  });
  ASSERT_FALSE(timing.ok());
  EXPECT_EQ(timing.error().message, "call 3 failed");
}

TEST(GpuState, NamesTheDevice) {
  SKIP_WITHOUT_GPU();
  GpuState state = read_gpu_state();
  EXPECT_NE(state.name, "unknown");
  EXPECT_GT(state.max_sm_clock_mhz, 0);
}

}  // namespace
}  // namespace dragon::harness
