// Sentinel and garbage pre-fills of output buffers.
#include "dragon/harness/output_prefill.h"

#include <cmath>
#include <cstring>

#include "dragon/harness/output_comparison.h"
#include "dragon/harness/seed_sequence.h"
#include "dragon/support/error.h"

namespace dragon::harness {
namespace {

// Quiet NaNs (exponent all ones, top mantissa bit set) with a 0x5a.. payload.
constexpr uint64_t kF64Sentinel = 0x7ff85a5a5a5a5a5aull;
constexpr uint32_t kF32Sentinel = 0x7fda5a5au;
constexpr uint16_t kF16Sentinel = 0x7e5au;
constexpr uint16_t kBF16Sentinel = 0x7fdau;

template <typename Bits>
void fill_bits(tensor::HostTensor& tensor, Bits bits) {
  auto* data = static_cast<uint8_t*>(tensor.data());
  for (int64_t i = 0; i < tensor.num_elements(); ++i) std::memcpy(data + i * sizeof(Bits), &bits, sizeof(Bits));
}

}  // namespace

void fill_sentinel(tensor::HostTensor& tensor) {
  ir::DataType dtype = tensor.dtype();
  if (!dtype.is_float()) {
    std::memset(tensor.data(), 0x5a, static_cast<size_t>(tensor.size_bytes()));
  } else if (dtype.code() == ir::TypeCode::kBFloat) {
    fill_bits(tensor, kBF16Sentinel);
  } else if (dtype.bits() == 16) {
    fill_bits(tensor, kF16Sentinel);
  } else if (dtype.bits() == 32) {
    fill_bits(tensor, kF32Sentinel);
  } else {
    fill_bits(tensor, kF64Sentinel);
  }
}

void fill_garbage(tensor::HostTensor& tensor, uint64_t seed) {
  SeedSequence random(seed);
  ir::DataType dtype = tensor.dtype();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) {
    uint64_t bits = random.next();
    if (dtype.is_float()) {
      // Mantissa in [1, 2), sign and a power of two in [2^-8, 2^8): never 0, never special.
      double mantissa = 1.0 + static_cast<double>(bits >> 12) * 0x1p-52;
      int exponent = static_cast<int>((bits >> 1) % 16) - 8;
      tensor.set(i, ((bits & 1) != 0 ? -1.0 : 1.0) * std::ldexp(mantissa, exponent));
    } else if (dtype.is_bool()) {
      // Bytes 2..255: no bool a kernel writes (0 or 1) is mistaken for one of them.
      static_cast<uint8_t*>(tensor.data())[i] = static_cast<uint8_t>(2 + bits % 254);
    } else {
      std::memcpy(static_cast<uint8_t*>(tensor.data()) + i * dtype.bytes(), &bits, static_cast<size_t>(dtype.bytes()));
    }
  }
}

void keep_garbage_off(tensor::HostTensor& garbage, const tensor::HostTensor& written) {
  DRAGON_CHECK(garbage.dtype() == written.dtype() && garbage.num_elements() == written.num_elements(),
               "keep_garbage_off: the garbage and the written output differ in type or size");
  tensor::HostTensor sentinel = garbage;
  fill_sentinel(sentinel);
  const int64_t width = garbage.dtype().bytes();
  for (int64_t i = 0; i < garbage.num_elements(); ++i) {
    if (!same_bits(garbage, written, i)) continue;
    std::memcpy(static_cast<uint8_t*>(garbage.data()) + i * width,
                static_cast<const uint8_t*>(sentinel.data()) + i * width, static_cast<size_t>(width));
  }
}

}  // namespace dragon::harness
