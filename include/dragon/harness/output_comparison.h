// One output of a candidate against the reference: error normalised by the reference's
// own magnitude (never an absolute tolerance), every element classified as correct, wrong,
// NaN/Inf where the reference is finite, or never written (still holding what the harness
// put there), with the first offenders' indices and values for the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/tensor/host_tensor.h"

namespace dragon::harness {

struct ElementMismatch {
  int64_t index = 0;  // flat, row-major
  double expected = 0;
  double actual = 0;
};

struct OutputComparison {
  static constexpr size_t kShown = 5;  // offenders kept per class

  double tolerance = 0;          // on normalized_error
  double reference_scale = 0;    // max |reference| over its finite elements
  double max_abs_error = 0;      // over elements where both are finite
  double normalized_error = 0;   // max_abs_error / reference_scale
  int64_t elements = 0;
  int64_t unwritten = 0;         // bitwise equal to the pre-filled value
  int64_t non_finite = 0;        // NaN or Inf where the reference is finite, or the wrong special value
  int64_t wrong = 0;             // finite but beyond the tolerance
  std::vector<ElementMismatch> first_unwritten, first_non_finite, first_wrong;

  bool ok() const { return unwritten == 0 && non_finite == 0 && wrong == 0; }
};

// Compares `actual` with `exact` (the f64 reference; for integer and bool outputs the
// native one). `native` is the reference in the candidate's type: where it overflowed or
// produced NaN the candidate must produce the same special value (or a finite value within
// tolerance of `exact`). Elements bitwise equal to `prefill` (when given: what the harness
// wrote there before the run) count as unwritten, not as wrong. Shapes must agree.
OutputComparison compare_output(const tensor::HostTensor& native, const tensor::HostTensor& exact,
                                const tensor::HostTensor& actual, double tolerance,
                                const tensor::HostTensor* prefill = nullptr);

// Normalised max |a - b| over elements finite in both, by max |b| over those elements:
// how far the native reference is from the f64 one.
double normalized_difference(const tensor::HostTensor& a, const tensor::HostTensor& b);

// Whether element `index` of `a` and `b` (same dtype) has the same bit pattern.
bool same_bits(const tensor::HostTensor& a, const tensor::HostTensor& b, int64_t index);
// Whether the tensors are bitwise identical (same dtype and shape).
bool same_bits(const tensor::HostTensor& a, const tensor::HostTensor& b);

// "[2, 17]": a flat index as coordinates of `shape`.
std::string format_index(const std::vector<int64_t>& shape, int64_t flat);

// "max |error| 3e-07 = 2.1e-08 of the reference's scale 14.2 (tolerance 1e-05); 3 of 4096
// elements wrong: [0, 3] expected 1.5, got 1.25; ..." for the report.
std::string describe(const OutputComparison& comparison, const std::vector<int64_t>& shape);

}  // namespace dragon::harness
