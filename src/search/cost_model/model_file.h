// The cost model's file format: a magic line, a version, then length-prefixed little-
// endian fields. The reader checks every length against what is left, so a truncated or
// foreign file is a UserError naming the path, the offset and the field, never a crash.
// Not a general serializer: only what cost models save.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::search::model_file {

inline constexpr std::string_view kMagic = "little-dragon cost model\n";
inline constexpr uint32_t kVersion = 1;

class Writer {
 public:
  // Starts with the magic, the version and the model kind ("xgb", "random").
  explicit Writer(std::string_view kind);
  void u64(uint64_t v);
  void f64(double v);
  void bytes(std::string_view data);  // length-prefixed
  void floats(const std::vector<float>& v);  // count-prefixed
  // Writes the whole file (to a temporary name, then renamed: no half-written model).
  void save(const std::filesystem::path& path) const;

 private:
  std::string data_;
};

class Reader {
 public:
  // Reads the file and checks the magic, the version and that the kind is `kind`.
  Reader(const std::filesystem::path& path, std::string_view kind);
  uint64_t u64(std::string_view field);
  double f64(std::string_view field);
  std::string bytes(std::string_view field);
  std::vector<float> floats(std::string_view field);
  // Throws unless everything was read.
  void finish();
  // A UserError "PATH: MESSAGE (at byte N)".
  [[noreturn]] void fail(std::string_view message) const;

 private:
  void need(size_t n, std::string_view field);
  std::filesystem::path path_;
  std::string data_;
  size_t pos_ = 0;
};

}  // namespace dragon::search::model_file
