// Comparison of two runs of one computation (an unscheduled and a scheduled function on
// the same inputs): error normalised by the reference's own magnitude, with a default
// tolerance per type for reassociated float arithmetic. Not the adversarial harness.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/tensor/host_tensor.h"

namespace dragon::interp {

struct TensorComparison {
  double max_abs_error = 0;
  double reference_scale = 0;    // max |reference| over finite elements
  double normalized_error = 0;   // max_abs_error / max(reference_scale, tiny)
  int64_t mismatches = 0;        // elements beyond the tolerance, or NaN/Inf disagreements
  std::vector<int64_t> first_mismatches;  // up to 8 flat indices
  bool ok = true;
};

// Tolerance on normalized_error for results that may differ only by the order of float
// reductions: 0 for ints and bool, 1e-12 f64, 1e-5 f32, 1e-2 f16, 2e-2 bf16.
double reordering_tolerance(ir::DataType dtype);

// Compares element by element; NaN must match NaN and Inf must match the same Inf.
TensorComparison compare_tensors(const tensor::HostTensor& reference, const tensor::HostTensor& actual,
                                 double tolerance);

// "max |error| 3e-07 (2.1e-08 of the reference's scale 14.2); 0 elements differ" plus the
// first differing indices with their values.
std::string describe(const TensorComparison& comparison, const tensor::HostTensor& reference,
                     const tensor::HostTensor& actual);

}  // namespace dragon::interp
