// Comparing an output with its f64 reference where both already are: on the device. The
// statistics match interp::compare_tensors (error normalised by the reference's largest
// finite magnitude; a NaN or Inf where the reference is finite, or the other way round, is
// a mismatch), so the verdict rules are the same as in the harness.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dragon/ir/dtype.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::bench {

struct DeviceComparison {
  double max_abs_error = 0;    // over elements where both are finite
  double reference_scale = 0;  // max |reference| over finite elements
  int64_t nonfinite_mismatches = 0;
  double normalized_error() const;  // max_abs_error / max(reference_scale, tiny); inf with mismatches
  std::string describe() const;     // "2.1e-07 of the reference's scale 3.4 (max |error| 7.1e-07)"
};

class DeviceComparer {
 public:
  // Compiles its kernels with NVRTC (cached); throws UserError when that fails.
  explicit DeviceComparer(runtime::CudaDriver* driver);
  ~DeviceComparer();
  DeviceComparer(const DeviceComparer&) = delete;
  DeviceComparer& operator=(const DeviceComparer&) = delete;

  // `actual` holds `elements` of `dtype` (f64, f32, f16, bf16, i8, i32, i64, bool),
  // `reference` as many f64. Throws UserError for another type or a failed launch.
  // The CUDA source it compiles (tests compile it with NVRTC where there is no GPU).
  static std::string_view source();

  DeviceComparison compare(runtime::DevicePtr actual, ir::DataType dtype, runtime::DevicePtr reference,
                           int64_t elements);

  // Elements where torch.allclose's test |actual - reference| <= atol + rtol |reference|
  // fails (KernelBench's check); 0 means allclose passes.
  int64_t count_not_close(runtime::DevicePtr actual, ir::DataType dtype, runtime::DevicePtr reference,
                          int64_t elements, double atol, double rtol);

  // The sum of `elements` f64 values (a reference's mean, for the constant a cheat would return).
  double sum(runtime::DevicePtr values, int64_t elements);

  // Writes `elements` of `dtype` (as compare accepts) to `destination` as f64: the inputs of
  // an f64 twin hold exactly the values the function under test reads.
  void widen(runtime::DevicePtr source, ir::DataType dtype, runtime::DevicePtr destination, int64_t elements);

 private:
  runtime::CudaDriver* driver_;
  void* module_ = nullptr;
  runtime::DevicePtr stats_ = 0;  // 3 x 64-bit accumulators
};

}  // namespace dragon::bench
