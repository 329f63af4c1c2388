// torch.allclose as KernelBench calls it.
#include "dragon/harness/kernelbench_check.h"

#include <cmath>

#include "dragon/support/error.h"

namespace dragon::harness {

double kernelbench_head_tolerance(ir::DataType dtype) {
  return dtype.is_float() && dtype.bits() == 16 ? 1e-2 : 1e-4;
}

bool kernelbench_allclose(const tensor::HostTensor& reference, const tensor::HostTensor& candidate, double atol,
                          double rtol) {
  DRAGON_CHECK(reference.num_elements() == candidate.num_elements(), "allclose of tensors of different sizes");
  for (int64_t i = 0; i < reference.num_elements(); ++i) {
    double r = reference.get(i), c = candidate.get(i);
    if (std::isnan(r) || std::isnan(c)) return false;
    if (std::isinf(r) || std::isinf(c)) {
      if (r != c) return false;
      continue;
    }
    if (std::fabs(r - c) > atol + rtol * std::fabs(c)) return false;
  }
  return true;
}

}  // namespace dragon::harness
