// A compact, comparable summary of a tensor's contents: sums, extremes, NaN count and a
// fingerprint of its bytes. What `dragon run` prints; not a correctness check.
#pragma once

#include <cstdint>
#include <string>

#include "dragon/tensor/host_tensor.h"

namespace dragon::interp {

struct TensorSummary {
  double sum = 0;
  double mean_abs = 0;
  double min = 0;  // over non-NaN elements; 0 when there are none
  double max = 0;
  int64_t nan_count = 0;
  uint64_t fingerprint = 0;  // FNV-1a of the bytes: equal tensors, equal fingerprints
};

TensorSummary summarize(const tensor::HostTensor& tensor);
// "f32[128, 64]"
std::string describe_type(const tensor::HostTensor& tensor);

}  // namespace dragon::interp
