// The samples column's byte layout (sample_blob.h), independent of the host's byte order.
#include "sample_blob.h"

#include <bit>
#include <cstdint>

namespace dragon::db {

std::string encode_samples(std::span<const float> samples_ms) {
  std::string bytes;
  bytes.reserve(samples_ms.size() * 4);
  for (float sample : samples_ms) {
    const auto bits = std::bit_cast<uint32_t>(sample);
    for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<char>((bits >> shift) & 0xff));
  }
  return bytes;
}

std::optional<std::vector<float>> decode_samples(std::span<const std::byte> bytes) {
  if (bytes.size() % 4 != 0) return std::nullopt;
  std::vector<float> samples;
  samples.reserve(bytes.size() / 4);
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t bits = 0;
    for (int b = 0; b < 4; ++b) bits |= static_cast<uint32_t>(bytes[i + b]) << (8 * b);
    samples.push_back(std::bit_cast<float>(bits));
  }
  return samples;
}

}  // namespace dragon::db
