// File reads and writes for tools and databases.
#include "dragon/support/file.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <unistd.h>

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

namespace {

void write_to(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  write(out);
  out.flush();
  if (!out) throw UserError(fmt::format("cannot write {}: write error", path));
}

}  // namespace

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // of a link's target
  if (fs::is_directory(status)) throw UserError(fmt::format("cannot write {}: it is a directory", path));
  // A device, pipe or socket (/dev/null, /dev/stdout, a shell's <(...)) is written in place:
  // a file renamed over it would replace it, and as root `-o /dev/null` replaced /dev/null.
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    write_to(path, write);
    return;
  }
  // Through a link, the file it names is replaced, not the link.
  const fs::path target = fs::is_symlink(fs::symlink_status(path, ec)) ? fs::weakly_canonical(path, ec) : fs::path(path);
  // A temporary of this process's own beside the target: two writers of one path never
  // share one (a shared PATH.tmp made one writer's rename fail with "No such file").
  static std::atomic<uint64_t> writes{0};
  const std::string tmp = fmt::format("{}.tmp.{}.{}", target.string(), ::getpid(), writes++);
  try {
    write_to(tmp, write);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw UserError(fmt::format("cannot write {}: {}", path, ec.message()));
  }
}

void write_text_file(const std::string& path, std::string_view text) {
  write_file(path, [&](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

}  // namespace dragon
