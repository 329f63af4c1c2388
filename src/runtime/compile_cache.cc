// The on-disk compile cache (compile_cache.h). Keys are two independent 64-bit FNV-1a
// hashes of the length-prefixed parts: a collision would need both to collide.
#include "dragon/runtime/compile_cache.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "dragon/support/env.h"

namespace dragon::runtime {
namespace {

uint64_t fnv1a(uint64_t hash, std::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace

CompileCache::CompileCache(std::string directory) : directory_(std::move(directory)) {}

std::string CompileCache::default_directory() {
  if (auto dir = env_cache_dir()) return *dir;
  if (auto home = env_home()) return *home + "/.cache/little-dragon";
  return "/tmp/little-dragon-cache";
}

CompileCache& CompileCache::global() {
  static CompileCache cache(default_directory());
  return cache;
}

std::string CompileCache::key(std::initializer_list<std::string_view> parts) {
  uint64_t a = 0xcbf29ce484222325ULL, b = 0x84222325cbf29ce4ULL;
  for (std::string_view part : parts) {
    std::string length = std::to_string(part.size()) + ":";
    a = fnv1a(fnv1a(a, length), part);
    b = fnv1a(fnv1a(b, part), length);
  }
  char text[40];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return text;
}

std::string CompileCache::path(const std::string& key, std::string_view suffix) const {
  return directory_ + "/" + key + std::string(suffix);
}

bool CompileCache::contains(const std::string& key, std::string_view suffix) const {
  std::error_code ec;
  return std::filesystem::exists(path(key, suffix), ec);
}

std::optional<std::string> CompileCache::load(const std::string& key, std::string_view suffix) {
  std::ifstream in(path(key, suffix), std::ios::binary);
  if (!in) {
    ++misses_;
    return std::nullopt;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  ++hits_;
  return bytes.str();
}

Status CompileCache::ensure_directory() {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) return DRAGON_RUNTIME_FAILURE("create_directories", "cannot create cache directory " + directory_ + ": " + ec.message(), "");
  return {};
}

Expected<std::string> CompileCache::scratch_path(std::string_view suffix) {
  if (Status s = ensure_directory(); !s) return s.error();
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  return directory_ + "/tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(device()) + std::string(suffix);
}

Status CompileCache::publish(const std::string& scratch, const std::string& key, std::string_view suffix) {
  if (std::rename(scratch.c_str(), path(key, suffix).c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(scratch.c_str());
    return DRAGON_RUNTIME_FAILURE("rename", "cannot publish " + scratch + " as " + path(key, suffix) + ": " + reason, "");
  }
  return {};
}

Status CompileCache::store(const std::string& key, std::string_view suffix, std::string_view bytes) {
  Expected<std::string> scratch = scratch_path(suffix);
  if (!scratch) return scratch.error();
  {
    std::ofstream out(scratch.value(), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return DRAGON_RUNTIME_FAILURE("write", "cannot write " + scratch.value(), "");
  }
  return publish(scratch.value(), key, suffix);
}

}  // namespace dragon::runtime
