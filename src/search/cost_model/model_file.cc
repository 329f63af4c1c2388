// Reading and writing cost-model files (model_file.h).
#include "model_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::search::model_file {

Writer::Writer(std::string_view kind) {
  data_.append(kMagic);
  u64(kVersion);
  bytes(kind);
}

void Writer::u64(uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  data_.append(b, 8);
}

void Writer::f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  u64(bits);
}

void Writer::bytes(std::string_view data) {
  u64(data.size());
  data_.append(data);
}

void Writer::floats(const std::vector<float>& v) {
  u64(v.size());
  for (float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    char b[4];
    for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
    data_.append(b, 4);
  }
}

void Writer::save(const std::filesystem::path& path) const { write_text_file(path.string(), data_); }

Reader::Reader(const std::filesystem::path& path, std::string_view kind) : path_(path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("{}: cannot open the cost model file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  data_ = text.str();
  if (data_.compare(0, kMagic.size(), kMagic) != 0) fail("not a Little Dragon cost model (no magic line)");
  pos_ = kMagic.size();
  const uint64_t version = u64("version");
  if (version != kVersion) fail(fmt::format("cost model file version {}, this build reads version {}", version, kVersion));
  const std::string found = bytes("model kind");
  if (found != kind) fail(fmt::format("a '{}' cost model, not a '{}' one", found, kind));
}

void Reader::fail(std::string_view message) const {
  throw UserError(fmt::format("{}: {} (at byte {})", path_.string(), message, pos_));
}

void Reader::need(size_t n, std::string_view field) {
  if (n > data_.size() - pos_) {
    fail(fmt::format("truncated: {} needs {} bytes, {} left", field, n, data_.size() - pos_));
  }
}

uint64_t Reader::u64(std::string_view field) {
  need(8, field);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return v;
}

double Reader::f64(std::string_view field) {
  uint64_t bits = u64(field);
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

std::string Reader::bytes(std::string_view field) {
  const uint64_t n = u64(field);
  need(n, field);
  std::string s = data_.substr(pos_, n);
  pos_ += n;
  return s;
}

std::vector<float> Reader::floats(std::string_view field) {
  const uint64_t n = u64(field);
  if (n > (data_.size() - pos_) / 4) need(n * 4, field);
  std::vector<float> v(n);
  for (uint64_t k = 0; k < n; ++k) {
    uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits |= static_cast<uint32_t>(static_cast<unsigned char>(data_[pos_ + i])) << (8 * i);
    std::memcpy(&v[k], &bits, sizeof(float));
    pos_ += 4;
  }
  return v;
}

void Reader::finish() {
  if (pos_ != data_.size()) fail(fmt::format("{} unexpected bytes after the model", data_.size() - pos_));
}

}  // namespace dragon::search::model_file
