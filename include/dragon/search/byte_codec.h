// Byte strings for the worker protocols (worker_process.h): fixed-width numbers in host
// order (both ends are one program on one machine) and length-prefixed byte runs. A short
// read is an InternalError (the two ends disagree).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "dragon/support/error.h"

namespace dragon::search {

class ByteWriter {
 public:
  void byte(char c) { out_.push_back(c); }
  void u64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void f64(double v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void bytes(std::string_view b) {
    u64(b.size());
    out_.append(b);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  char byte() { return take(1)[0]; }
  uint64_t u64() {
    uint64_t v;
    std::memcpy(&v, take(sizeof(v)).data(), sizeof(v));
    return v;
  }
  double f64() {
    double v;
    std::memcpy(&v, take(sizeof(v)).data(), sizeof(v));
    return v;
  }
  std::string_view bytes() { return take(u64()); }
  std::string_view rest() { return take(in_.size()); }

 private:
  std::string_view take(size_t n) {
    DRAGON_CHECK(n <= in_.size(), "a worker message ended {} bytes early", n - in_.size());
    std::string_view out = in_.substr(0, n);
    in_.remove_prefix(n);
    return out;
  }
  std::string_view in_;
};

}  // namespace dragon::search
