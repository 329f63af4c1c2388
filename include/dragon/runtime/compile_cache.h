// The on-disk cache of compiled artifacts (shared objects, CUBINs), keyed by a hash of
// everything that decides their bytes: source, flags, compiler version. Entries appear
// atomically (written aside, then renamed), so concurrent processes may share a directory.
// Not an in-memory cache of loaded modules.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "dragon/support/expected.h"

namespace dragon::runtime {

class CompileCache {
 public:
  explicit CompileCache(std::string directory);
  // $DRAGON_CACHE_DIR, else ~/.cache/little-dragon (created on first store).
  static CompileCache& global();
  static std::string default_directory();

  // A 32-hex-digit key over `parts` (each part length-prefixed, so boundaries matter).
  static std::string key(std::initializer_list<std::string_view> parts);
  // DIR/KEY.SUFFIX, whether or not it exists.
  std::string path(const std::string& key, std::string_view suffix) const;
  // The entry's bytes; counts a hit or a miss.
  std::optional<std::string> load(const std::string& key, std::string_view suffix);
  bool contains(const std::string& key, std::string_view suffix) const;
  // Writes atomically.
  Status store(const std::string& key, std::string_view suffix, std::string_view bytes);
  // A unique path inside the directory for a file that store_file() will then publish.
  Expected<std::string> scratch_path(std::string_view suffix);
  // Renames a finished scratch file into place as KEY.SUFFIX (atomic on one file system).
  Status publish(const std::string& scratch, const std::string& key, std::string_view suffix);

  void count_hit() { ++hits_; }
  void count_miss() { ++misses_; }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  const std::string& directory() const { return directory_; }

 private:
  Status ensure_directory();
  std::string directory_;
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> misses_{0};
};

}  // namespace dragon::runtime
