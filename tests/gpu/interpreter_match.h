// What the GPU tests of generated kernels share: a clean skip without a device, and
// building a scheduled function for the H200, running it and comparing its outputs with
// the interpreter's on the original function.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/lower/lower.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/cuda_driver.h"
#include "unit/codegen/codegen_test_util.h"

namespace dragon::codegen {

// CUDA's float math differs from the interpreter's double-then-round by a few ulps and
// NVRTC contracts multiply-adds, so the tolerance is a few times the CPU one.
inline constexpr double kGpuToleranceScale = 4;

#define DRAGON_REQUIRE_GPU()                                                                             \
  do {                                                                                                   \
    Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();                         \
    if (!driver.ok()) GTEST_SKIP() << "[SKIP] no CUDA device: " << driver.error().describe();            \
  } while (0)

// Builds `scheduled` for the H200, runs it on seeded inputs and compares every output with
// the interpreter running `original`.
inline ::testing::AssertionResult runs_like_interpreter(const std::string& label, const ir::PrimFunc& original,
                                                 const ir::PrimFunc& scheduled, double tolerance_scale) {
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  auto exe = runtime::build(scheduled, lower::Target::cuda_h200(), options);
  if (!exe.ok()) return ::testing::AssertionFailure() << label << ": " << exe.error().describe();
  std::vector<tensor::HostTensor> args = interp::make_arguments(original, 11, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> reference = args;
  interp::run(original, reference);
  Status status = exe.value()->run(args);
  if (!status.ok()) return ::testing::AssertionFailure() << label << ": " << status.error().describe();
  ::testing::AssertionResult match = testing::outputs_match(original, reference, args, tolerance_scale);
  if (!match) return ::testing::AssertionFailure() << label << ": " << match.message();
  return ::testing::AssertionSuccess();
}

}  // namespace dragon::codegen
