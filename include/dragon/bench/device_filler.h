// Random inputs written on the device: gigabytes generated on the host and copied would
// dominate a suite run. A counter-based hash per element, so a seed gives the same values
// on every run and GPU. Distributions: torch.rand's U[0, 1) (what KernelBench feeds) and
// N(0, 1).
#pragma once

#include <cstdint>
#include <string_view>

#include "dragon/ir/dtype.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::bench {

class DeviceFiller {
 public:
  // Compiles its kernels with NVRTC (cached); throws UserError when that or loading fails.
  explicit DeviceFiller(runtime::CudaDriver* driver);
  ~DeviceFiller();
  DeviceFiller(const DeviceFiller&) = delete;
  DeviceFiller& operator=(const DeviceFiller&) = delete;

  // The CUDA source it compiles (tests compile it with NVRTC where there is no GPU).
  static std::string_view source();

  enum class Distribution : uint8_t { kUniform01, kNormal };
  // f32, f16, bf16 or f64 elements; throws UserError for another type or a failed launch.
  void fill(runtime::DevicePtr ptr, ir::DataType dtype, int64_t elements, Distribution distribution, uint64_t seed);
  // Every element of an f64 buffer set to `value` (a constant candidate output).
  void fill_constant_f64(runtime::DevicePtr ptr, int64_t elements, double value);

 private:
  runtime::CudaDriver* driver_;
  void* module_ = nullptr;
};

}  // namespace dragon::bench
