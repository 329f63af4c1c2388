// File reads and writes for tools and databases.
#include "dragon/support/file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dragon/support/error.h"

namespace dragon {

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError(fmt::format("cannot read {}: it is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UserError(fmt::format("cannot read {}: read error", path));
  return text.str();
}

void write_text_file(const std::string& path, std::string_view text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UserError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw UserError(fmt::format("cannot write {}: write error", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw UserError(fmt::format("cannot write {}: {}", path, ec.message()));
}

}  // namespace dragon
