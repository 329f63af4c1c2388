// Tensor summaries for command-line output and quick comparisons.
#include "dragon/interp/tensor_summary.h"

#include <cmath>
#include <limits>

namespace dragon::interp {

TensorSummary summarize(const tensor::HostTensor& tensor) {
  TensorSummary s;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  double abs_sum = 0;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    double v = tensor.get(i);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    s.sum += v;
    abs_sum += std::fabs(v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  int64_t counted = tensor.num_elements() - s.nan_count;
  if (counted > 0) {
    s.mean_abs = abs_sum / static_cast<double>(counted);
    s.min = lo;
    s.max = hi;
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  const auto* bytes = static_cast<const uint8_t*>(tensor.data());
  for (int64_t i = 0; i < tensor.size_bytes(); ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  s.fingerprint = hash;
  return s;
}

std::string describe_type(const tensor::HostTensor& tensor) {
  std::string text = ir::to_string(tensor.dtype()) + "[";
  for (size_t i = 0; i < tensor.shape().size(); ++i) text += (i ? ", " : "") + std::to_string(tensor.shape()[i]);
  return text + "]";
}

}  // namespace dragon::interp
