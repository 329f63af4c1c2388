// Per-dtype tolerance floors and their calibration against the f64 reference.
#include "dragon/harness/tolerance.h"

#include <algorithm>

namespace dragon::harness {

double tolerance_floor(ir::DataType dtype) {
  if (!dtype.is_float()) return 0;
  // Units in the last place at 1: bf16 2^-7, f16 2^-10, f32 2^-23, f64 2^-52.
  if (dtype.code() == ir::TypeCode::kBFloat) return 1.6e-2;
  switch (dtype.bits()) {
    case 64: return 1e-12;
    case 32: return 1e-5;
    default: return 2e-3;
  }
}

double calibrated_tolerance(ir::DataType dtype, double reference_error) {
  if (!dtype.is_float()) return 0;
  return std::max(tolerance_floor(dtype), kReferenceErrorMargin * reference_error);
}

}  // namespace dragon::harness
