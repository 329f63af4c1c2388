// Scale-invariant comparison of one output with its reference.
#include "dragon/harness/output_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/support/error.h"

namespace dragon::harness {
namespace {

// The scale below which a reference counts as zero; errors are then absolute.
constexpr double kTinyScale = 1e-30;

void note(std::vector<ElementMismatch>& shown, int64_t index, double expected, double actual) {
  if (shown.size() < OutputComparison::kShown) shown.push_back({index, expected, actual});
}

bool same_special(double expected, double actual) {
  return (std::isnan(expected) && std::isnan(actual)) || expected == actual;
}

}  // namespace

bool same_bits(const tensor::HostTensor& a, const tensor::HostTensor& b, int64_t index) {
  int64_t width = a.dtype().bytes();
  const auto* pa = static_cast<const uint8_t*>(a.data()) + index * width;
  const auto* pb = static_cast<const uint8_t*>(b.data()) + index * width;
  return std::memcmp(pa, pb, static_cast<size_t>(width)) == 0;
}

bool same_bits(const tensor::HostTensor& a, const tensor::HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size_bytes())) == 0;
}

double normalized_difference(const tensor::HostTensor& a, const tensor::HostTensor& b) {
  DRAGON_CHECK(a.num_elements() == b.num_elements(), "normalized_difference of tensors of different sizes");
  double scale = 0, difference = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double x = a.get(i), y = b.get(i);
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    scale = std::max(scale, std::fabs(y));
    difference = std::max(difference, std::fabs(x - y));
  }
  return difference / std::max(scale, kTinyScale);
}

OutputComparison compare_output(const tensor::HostTensor& native, const tensor::HostTensor& exact,
                                const tensor::HostTensor& actual, double tolerance,
                                const tensor::HostTensor* prefill) {
  DRAGON_CHECK(native.num_elements() == actual.num_elements() && exact.num_elements() == actual.num_elements(),
               "comparing an output of {} elements with a reference of {}", actual.num_elements(),
               exact.num_elements());
  DRAGON_CHECK(prefill == nullptr || (prefill->dtype() == actual.dtype() &&
                                      prefill->num_elements() == actual.num_elements()),
               "the pre-filled tensor does not match the output");
  OutputComparison c;
  c.tolerance = tolerance;
  c.elements = actual.num_elements();
  for (int64_t i = 0; i < c.elements; ++i) {
    double n = native.get(i), e = exact.get(i);
    if (std::isfinite(n) && std::isfinite(e)) c.reference_scale = std::max(c.reference_scale, std::fabs(e));
  }
  double scale = std::max(c.reference_scale, kTinyScale);
  double allowed = tolerance * scale;
  for (int64_t i = 0; i < c.elements; ++i) {
    double n = native.get(i), e = exact.get(i), a = actual.get(i);
    if (prefill != nullptr && same_bits(actual, *prefill, i)) {
      ++c.unwritten;
      note(c.first_unwritten, i, e, a);
      continue;
    }
    bool close_to_exact = std::isfinite(a) && std::isfinite(e) && std::fabs(a - e) <= allowed;
    if (!std::isfinite(n)) {
      // The reference overflowed (or is NaN) in the candidate's type: the candidate must
      // agree, or be right where the f64 reference is finite.
      if (!same_special(n, a) && !close_to_exact) {
        ++c.non_finite;
        note(c.first_non_finite, i, n, a);
      }
      continue;
    }
    if (!std::isfinite(e)) {
      // Finite in the candidate's type but not in f64: judged against the native value.
      if (!std::isfinite(a)) {
        ++c.non_finite;
        note(c.first_non_finite, i, n, a);
      } else if (std::fabs(a - n) > allowed) {
        ++c.wrong;
        note(c.first_wrong, i, n, a);
      }
      continue;
    }
    if (!std::isfinite(a)) {
      ++c.non_finite;
      note(c.first_non_finite, i, e, a);
      continue;
    }
    double error = std::fabs(a - e);
    c.max_abs_error = std::max(c.max_abs_error, error);
    if (error > allowed) {
      ++c.wrong;
      note(c.first_wrong, i, e, a);
    }
  }
  c.normalized_error = c.max_abs_error / scale;
  return c;
}

std::string format_index(const std::vector<int64_t>& shape, int64_t flat) {
  if (shape.empty()) return "[]";
  std::vector<int64_t> coordinates(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = std::max<int64_t>(shape[d], 1);
    coordinates[d] = flat % extent;
    flat /= extent;
  }
  return fmt::format("[{}]", fmt::join(coordinates, ", "));
}

std::string describe(const OutputComparison& c, const std::vector<int64_t>& shape) {
  std::string text = fmt::format("max |error| {:.3g} = {:.3g} of the reference's scale {:.6g} (tolerance {:.3g})",
                                 c.max_abs_error, c.normalized_error, c.reference_scale, c.tolerance);
  auto list = [&](int64_t count, const std::vector<ElementMismatch>& shown, std::string_view what) {
    if (count == 0) return;
    text += fmt::format("; {} of {} elements {} ({:.3g}%):", count, c.elements, what,
                        100.0 * static_cast<double>(count) / static_cast<double>(std::max<int64_t>(c.elements, 1)));
    for (const ElementMismatch& m : shown) {
      text += fmt::format(" {} expected {:.9g}, got {:.9g};", format_index(shape, m.index), m.expected, m.actual);
    }
    if (count > static_cast<int64_t>(shown.size())) text += " ...";
  };
  list(c.unwritten, c.first_unwritten, "never written");
  list(c.non_finite, c.first_non_finite, "NaN or Inf where the reference is finite");
  list(c.wrong, c.first_wrong, "beyond the tolerance");
  return text;
}

}  // namespace dragon::harness
