// Scale-normalised comparison of two runs.
#include "dragon/interp/tensor_compare.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::interp {

double reordering_tolerance(ir::DataType dtype) {
  if (!dtype.is_float()) return 0;
  if (dtype.code() == ir::TypeCode::kBFloat) return 2e-2;
  switch (dtype.bits()) {
    case 64: return 1e-12;
    case 32: return 1e-5;
    default: return 1e-2;
  }
}

TensorComparison compare_tensors(const tensor::HostTensor& reference, const tensor::HostTensor& actual,
                                 double tolerance) {
  DRAGON_CHECK(reference.num_elements() == actual.num_elements() && reference.dtype() == actual.dtype(),
               "comparing tensors of different types or sizes");
  TensorComparison c;
  for (int64_t i = 0; i < reference.num_elements(); ++i) {
    double r = reference.get(i);
    if (std::isfinite(r)) c.reference_scale = std::max(c.reference_scale, std::fabs(r));
  }
  double scale = std::max(c.reference_scale, 1e-30);
  for (int64_t i = 0; i < reference.num_elements(); ++i) {
    double r = reference.get(i), a = actual.get(i);
    bool bad;
    if (!std::isfinite(r) || !std::isfinite(a)) {
      bad = !(std::isnan(r) && std::isnan(a)) && r != a;
    } else {
      double error = std::fabs(r - a);
      c.max_abs_error = std::max(c.max_abs_error, error);
      bad = error > tolerance * scale;
    }
    if (bad) {
      if (c.first_mismatches.size() < 8) c.first_mismatches.push_back(i);
      ++c.mismatches;
    }
  }
  c.normalized_error = c.max_abs_error / scale;
  c.ok = c.mismatches == 0;
  return c;
}

std::string describe(const TensorComparison& c, const tensor::HostTensor& reference, const tensor::HostTensor& actual) {
  std::string text = fmt::format("max |error| {:.3g} ({:.3g} of the reference's scale {:.6g}); {} element{} differ",
                                 c.max_abs_error, c.normalized_error, c.reference_scale, c.mismatches,
                                 c.mismatches == 1 ? "" : "s");
  for (int64_t i : c.first_mismatches) {
    text += fmt::format("\n  [{}] expected {:.9g}, got {:.9g}", i, reference.get(i), actual.get(i));
  }
  return text;
}

}  // namespace dragon::interp
