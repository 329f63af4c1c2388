// Environment variables of Little Dragon, read once each.
#include "dragon/support/env.h"

#include <cstdlib>
#include <string_view>

namespace dragon {
namespace {

std::optional<bool> read_flag(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  std::string_view v(value);
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  return std::nullopt;
}

}  // namespace

std::optional<bool> env_verify_ir() {
  static const std::optional<bool> value = read_flag("DRAGON_VERIFY_IR");
  return value;
}

std::optional<std::string> env_cache_dir() {
  static const std::optional<std::string> value = [] {
    const char* v = std::getenv("DRAGON_CACHE_DIR");
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  }();
  return value;
}

std::optional<std::string> env_home() {
  static const std::optional<std::string> value = [] {
    const char* v = std::getenv("HOME");
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  }();
  return value;
}

std::optional<std::string> env_corpus_dir() {
  static const std::optional<std::string> value = [] {
    const char* v = std::getenv("DRAGON_CORPUS_DIR");
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  }();
  return value;
}

}  // namespace dragon
