// Deterministic inputs for a PrimFunc from a seed and a distribution, honouring each
// parameter's value domain (index ranges, bag offsets, probabilities). The same seed
// gives the same bytes on every machine: no std:: distributions, which differ by library.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::interp {

enum class Distribution : uint8_t {
  kNormal,   // N(0, 1)
  kUniform,  // U[-1, 1): signed
  kRand,     // U[0, 1): torch.rand, what KernelBench feeds
  kOffset,   // 100 + N(0, 1): a large common offset (catches cancellation)
  kEdge,     // a mix of 0, +-1, tiny, huge-but-safe and ordinary values
};
std::optional<Distribution> parse_distribution(std::string_view name);
std::string_view distribution_name(Distribution distribution);
// "normal, uniform, rand, offset, edge", for messages.
std::string_view distribution_names();

// One tensor per parameter, in parameter order. Inputs are drawn from `distribution`
// within their domains (integer and offsets domains ignore the distribution); outputs
// are filled with NaN (floats) or a garbage pattern (ints) so unwritten elements show.
std::vector<tensor::HostTensor> make_arguments(const ir::PrimFunc& func, uint64_t seed, Distribution distribution);

// Parameter `index` alone, the same bytes make_arguments gives it: callers that fill large
// real-valued inputs elsewhere (on the device) still draw domain-bound ones here.
tensor::HostTensor make_argument(const ir::PrimFunc& func, size_t index, uint64_t seed, Distribution distribution);

}  // namespace dragon::interp
