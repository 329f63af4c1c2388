// The safetensors-layout reader and writer (tensor_file.h, docs/checkpoint-format.md).
// Every check a reader needs to trust the bytes is here, so a truncated or damaged
// checkpoint is a clear error instead of a model with garbage weights. No libtorch here.
#include "dragon/model/tensor_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <nlohmann/json.hpp>

#include "dragon/support/file.h"

namespace dragon::model {

static_assert(std::endian::native == std::endian::little,
              "tensor files hold little-endian data and are copied as is: a big-endian host needs byte swaps here");

namespace {

constexpr std::string_view kMetadataKey = "__metadata__";
constexpr std::string_view kCrcKey = "data_crc32";
// A header larger than this is damage, not a checkpoint (safetensors uses the same bound).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

struct TypeInfo {
  StorageType type;
  std::string_view name;
  size_t bytes;
};
constexpr std::array<TypeInfo, 5> kTypes = {{
    {StorageType::kF32, "F32", 4},
    {StorageType::kBF16, "BF16", 2},
    {StorageType::kF16, "F16", 2},
    {StorageType::kI64, "I64", 8},
    {StorageType::kI32, "I32", 4},
}};

const TypeInfo& info(StorageType type) {
  for (const TypeInfo& t : kTypes) {
    if (t.type == type) return t;
  }
  DRAGON_UNREACHABLE("storage type {}", static_cast<int>(type));
}

// product(shape) * bytes, or -1 when a dimension is negative or the product overflows.
int64_t byte_size(const std::vector<int64_t>& shape, size_t element_bytes) {
  int64_t n = static_cast<int64_t>(element_bytes);
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string to_hex(uint32_t value) { return fmt::format("{:08x}", value); }

}  // namespace

std::string_view storage_type_name(StorageType type) { return info(type).name; }
size_t storage_type_bytes(StorageType type) { return info(type).bytes; }

int64_t StoredTensor::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const StoredTensor* TensorFile::find(std::string_view name) const {
  for (const StoredTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const StoredTensor& TensorFile::at(std::string_view name, std::string_view origin) const {
  const StoredTensor* t = find(name);
  if (t == nullptr) throw TensorFileError(fmt::format("{}: no tensor named '{}'", origin, name));
  return *t;
}

const std::string& TensorFile::meta(std::string_view key, std::string_view origin) const {
  auto it = metadata.find(std::string(key));
  if (it == metadata.end()) throw TensorFileError(fmt::format("{}: no metadata entry '{}'", origin, key));
  return it->second;
}

uint32_t crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string serialize_tensor_file(const TensorFile& file) {
  std::vector<const StoredTensor*> sorted;
  for (const StoredTensor& t : file.tensors) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::string data;
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  for (size_t i = 0; i < sorted.size(); ++i) {
    const StoredTensor& t = *sorted[i];
    if (t.name == kMetadataKey) throw TensorFileError(fmt::format("tensor file: the name '{}' is reserved", t.name));
    if (i > 0 && sorted[i - 1]->name == t.name)
      throw TensorFileError(fmt::format("tensor file: two tensors named '{}'", t.name));
    const int64_t expected = byte_size(t.shape, storage_type_bytes(t.type));
    if (expected < 0 || static_cast<uint64_t>(expected) != t.data.size())
      throw TensorFileError(fmt::format("tensor file: tensor '{}' has {} bytes of data, its shape [{}] of {} needs {}",
                                        t.name, t.data.size(), fmt::join(t.shape, ","), storage_type_name(t.type),
                                        expected));
    const size_t begin = data.size();
    data += t.data;
    header[t.name] = {{"dtype", storage_type_name(t.type)}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  for (const auto& [key, value] : file.metadata) {
    if (key == kCrcKey) continue;  // recomputed below
    meta[key] = value;
  }
  meta[std::string(kCrcKey)] = to_hex(crc32(data));
  // safetensors puts the metadata first; readers look it up by key.
  nlohmann::ordered_json ordered = nlohmann::ordered_json::object();
  ordered[std::string(kMetadataKey)] = meta;
  for (auto& [key, value] : header.items()) ordered[key] = value;
  std::string json = ordered.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  out += json;
  out += data;
  return out;
}

TensorFile parse_tensor_file(std::string_view bytes, std::string_view origin) {
  auto fail = [&](const std::string& why) { return TensorFileError(fmt::format("{}: {}", origin, why)); };
  if (bytes.size() < 8)
    throw fail(fmt::format("{} bytes: too short for the 8-byte header length (truncated?)", bytes.size()));
  uint64_t header_bytes = 0;
  for (int i = 0; i < 8; ++i) header_bytes |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  if (header_bytes > kMaxHeaderBytes)
    throw fail(fmt::format("header length {} is implausible (over {} bytes): not a tensor file, or damaged",
                           header_bytes, kMaxHeaderBytes));
  if (header_bytes > bytes.size() - 8)
    throw fail(fmt::format("header length {} runs past the end of the file ({} bytes; truncated?)", header_bytes,
                           bytes.size()));
  const std::string_view json_text = bytes.substr(8, header_bytes);
  const std::string_view data = bytes.substr(8 + header_bytes);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw fail(fmt::format("header is not JSON ({})", e.what()));
  }
  if (!header.is_object()) throw fail("header is not a JSON object");

  TensorFile file;
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // (begin, end) per tensor, for coverage
  for (auto& [name, entry] : header.items()) {
    if (name == kMetadataKey) {
      if (!entry.is_object()) throw fail("__metadata__ is not an object");
      for (auto& [key, value] : entry.items()) {
        if (!value.is_string()) throw fail(fmt::format("metadata '{}' is not a string", key));
        file.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    auto bad = [&](std::string_view why) { return fail(fmt::format("tensor '{}': {}", name, why)); };
    if (!entry.is_object()) throw bad("entry is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) throw bad("missing dtype");
    if (!entry.contains("shape") || !entry["shape"].is_array()) throw bad("missing shape");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      throw bad("missing data_offsets [begin, end]");
    StoredTensor t;
    t.name = name;
    const std::string dtype = entry["dtype"].get<std::string>();
    auto type = std::find_if(kTypes.begin(), kTypes.end(), [&](const TypeInfo& i) { return i.name == dtype; });
    if (type == kTypes.end()) throw bad(fmt::format("unknown dtype '{}' (known: F32, BF16, F16, I64, I32)", dtype));
    t.type = type->type;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) throw bad("shape holds something other than sizes >= 0");
      t.shape.push_back(d.get<int64_t>());
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      throw bad("data_offsets are not non-negative integers");
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end) throw bad(fmt::format("data_offsets [{}, {}] end before they begin", begin, end));
    if (end > data.size())
      throw bad(fmt::format("data_offsets [{}, {}] run past the data section ({} bytes; truncated?)", begin, end,
                            data.size()));
    const int64_t expected = byte_size(t.shape, type->bytes);
    if (expected < 0 || static_cast<uint64_t>(expected) != end - begin)
      throw bad(fmt::format("{} bytes of data, its shape [{}] of {} needs {}", end - begin, fmt::join(t.shape, ","),
                            dtype, expected));
    t.data.assign(data.substr(begin, end - begin));
    spans.emplace_back(begin, end);
    file.tensors.push_back(std::move(t));
  }
  // The tensors tile the data section exactly: no overlap, no hole, nothing after.
  std::vector<size_t> order(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
  uint64_t covered = 0;
  for (size_t i : order) {
    if (spans[i].first != covered)
      throw fail(fmt::format("tensor '{}' starts at byte {} of the data, expected {} ({})", file.tensors[i].name,
                             spans[i].first, covered, spans[i].first < covered ? "overlap" : "hole"));
    covered = spans[i].second;
  }
  if (covered != data.size())
    throw fail(fmt::format("{} bytes after the last tensor (the data section is {} bytes, the tensors cover {})",
                           data.size() - covered, data.size(), covered));
  auto crc = file.metadata.find(std::string(kCrcKey));
  if (crc != file.metadata.end() && crc->second != to_hex(crc32(data)))
    throw fail(fmt::format("data CRC-32 is {}, the header says {}: the tensor data is damaged", to_hex(crc32(data)),
                           crc->second));
  return file;
}

void write_tensor_file(const std::string& path, const TensorFile& file) {
  write_text_file(path, serialize_tensor_file(file));
}

TensorFile read_tensor_file(const std::string& path) { return parse_tensor_file(read_text_file(path), path); }

}  // namespace dragon::model
