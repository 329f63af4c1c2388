// How far a candidate's output may be from the f64 reference: per output, the larger of a
// floor for its type and a margin times the error of the reference itself (the unscheduled
// function in its own types against its f64 twin). Errors are normalised by the reference's
// scale (max |f64 reference|). Not the comparison (output_comparison.h).
#pragma once

#include "dragon/ir/dtype.h"

namespace dragon::harness {

// The least tolerance of a type: about two units in the last place at the reference's
// scale for 16-bit floats, room for reordered f32 sums, 0 for integers and bool (exact).
// f64 1e-12, f32 1e-5, f16 2e-3, bf16 1.6e-2.
double tolerance_floor(ir::DataType dtype);

// A correct kernel may round differently from the reference (another summation order,
// fused multiply-adds, device math functions) but not by much more than the reference's
// own error: this many times it.
inline constexpr double kReferenceErrorMargin = 8;

// max(tolerance_floor(dtype), kReferenceErrorMargin * reference_error); 0 for non-floats.
double calibrated_tolerance(ir::DataType dtype, double reference_error);

}  // namespace dragon::harness
