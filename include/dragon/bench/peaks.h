// `dragon peaks`: what the current GPU reaches, measured with the harness's timer: device-
// to-device copy bandwidth (bytes read plus bytes written per second) and cuBLAS GEMM
// throughput in f32 (no TF32), f16 and bf16. Reports give achieved rates as fractions of
// these; the physics floor takes, per rate, the larger of these and the spec sheet (a floor
// must never reject a kernel that beats our measurement, e.g. a read-mostly kernel beating
// a copy).
#pragma once

#include <string>

#include "dragon/harness/gpu_timer.h"
#include "dragon/harness/physics_floor.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::bench {

struct PeakOptions {
  int64_t copy_bytes = 4LL << 30;  // per direction; far beyond the L2
  int64_t gemm_size = 8192;        // m = n = k
  harness::GpuTimerOptions timer;
};

struct MeasuredPeaks {
  std::string device;
  harness::GpuState gpu;
  double copy_bytes_per_s = 0;  // 2 x bytes / time of one cuMemcpyDtoD
  double f32_flops_per_s = 0;   // 2 m n k / time
  double f16_flops_per_s = 0;
  double bf16_flops_per_s = 0;
  int64_t l2_bytes = 0;
  std::string copy_timing, f32_timing, f16_timing, bf16_timing;  // GpuTiming::describe()
  std::string notes;  // what could not be measured, and why

  // Rates for reports (measured only).
  harness::DevicePeaks as_device_peaks() const;
  std::string to_text() const;
  std::string to_json(int indent = 2) const;
};

// Throws UserError when a measurement cannot run (allocation, launch); a GEMM precision
// cuBLAS lacks is left at 0 and said in notes.
MeasuredPeaks measure_peaks(runtime::CudaDriver* driver, const PeakOptions& options = {});

// Reads a file `dragon peaks --out` wrote; throws UserError naming the file and the field.
MeasuredPeaks load_peaks(const std::string& path);

// For the physics floor: per rate, the larger of `measured` and, for a device the spec
// sheets know (H200), its spec sheet.
harness::DevicePeaks floor_peaks(const MeasuredPeaks& measured);

}  // namespace dragon::bench
