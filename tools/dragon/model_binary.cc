// Finding and running dragon-model (model_binary.h).
#include "model_binary.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {

std::string model_binary_path() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw UserError("cannot find this program's folder (/proc/self/exe): " + error.message());
  const std::string path = (self.parent_path() / "dragon-model").string();
  if (!std::filesystem::exists(path))
    throw UserError(path + " is not there: the model's commands are built only where CMake finds libtorch");
  return path;
}

void exec_model_binary() {
  const std::string child = model_binary_path();
  const std::string cmdline = read_text_file("/proc/self/cmdline");
  std::vector<std::string> args;
  for (size_t start = 0; start < cmdline.size();) {
    const size_t end = cmdline.find('\0', start);
    args.push_back(cmdline.substr(start, end - start));
    start = end == std::string::npos ? cmdline.size() : end + 1;
  }
  args.at(0) = child;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(child.c_str(), argv.data());
  throw UserError("cannot run " + child + ": " + std::strerror(errno));
}

}  // namespace dragon::cli
