// Latency samples as stored in the records table: 32-bit IEEE floats, little-endian, one
// after another (4 bytes a sample). Internal to src/db.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dragon::db {

std::string encode_samples(std::span<const float> samples_ms);
// nullopt when the size is not a multiple of 4 (a damaged row).
std::optional<std::vector<float>> decode_samples(std::span<const std::byte> bytes);

}  // namespace dragon::db
