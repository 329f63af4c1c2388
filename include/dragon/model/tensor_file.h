// Checkpoint files in the safetensors layout, read and written by our own code
// (docs/checkpoint-format.md): an 8-byte little-endian header length, a JSON header with
// each tensor's dtype, shape and byte offsets plus string metadata, then the raw
// little-endian data. Knows bytes, not libtorch tensors (src/model/checkpoint.h converts).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/support/error.h"

namespace dragon::model {

// Element types a file may hold, spelled as safetensors spells them ("F32", "BF16", ...).
enum class StorageType : uint8_t { kF32, kBF16, kF16, kI64, kI32 };
std::string_view storage_type_name(StorageType type);
size_t storage_type_bytes(StorageType type);

struct StoredTensor {
  std::string name;
  StorageType type = StorageType::kF32;
  std::vector<int64_t> shape;  // row-major; {} is a scalar
  std::string data;            // little-endian elements, product(shape) * bytes each

  int64_t element_count() const;
};

struct TensorFile {
  std::map<std::string, std::string> metadata;  // the header's "__metadata__"
  std::vector<StoredTensor> tensors;            // in file order (written sorted by name)

  // The tensor called `name`; throws TensorFileError naming `origin` when absent.
  const StoredTensor& at(std::string_view name, std::string_view origin = "tensor file") const;
  const StoredTensor* find(std::string_view name) const;
  // The metadata value of `key`; throws TensorFileError when absent.
  const std::string& meta(std::string_view key, std::string_view origin = "tensor file") const;
};

// A file that is not a well-formed tensor file: what() is "ORIGIN: why".
class TensorFileError : public UserError {
 public:
  using UserError::UserError;
};

// The bytes of `file`: tensors sorted by name, contiguous, a "data_crc32" metadata entry
// (CRC-32 of the data section) added so corruption of the data is found on reading.
// Throws TensorFileError for a tensor whose data size does not match its shape, a
// duplicate name, or a name or metadata key the layout reserves ("__metadata__").
std::string serialize_tensor_file(const TensorFile& file);
// The inverse; every structural fault is a TensorFileError naming `origin` and the fault:
// shorter than the header length, a header length past the end, JSON that does not parse,
// a missing or mistyped field, an unknown dtype, offsets out of order, overlapping, past
// the end or not matching the shape, bytes after the last tensor, a CRC mismatch.
TensorFile parse_tensor_file(std::string_view bytes, std::string_view origin);

// Atomic write (PATH.tmp, then rename) and read; errors name the path.
void write_tensor_file(const std::string& path, const TensorFile& file);
TensorFile read_tensor_file(const std::string& path);

// CRC-32 (IEEE 802.3, as zlib computes it) of `bytes`.
uint32_t crc32(std::string_view bytes);

}  // namespace dragon::model
