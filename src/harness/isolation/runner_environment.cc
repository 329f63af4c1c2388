// The runner's environment and location (runner_environment.h, find_kernel_runner): the
// only getenv calls of isolation, each variable read once.
#include "runner_environment.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>

#include "dragon/harness/isolated_candidate.h"
#include "dragon/support/error.h"

namespace dragon::harness {
namespace {

constexpr const char* kRunnerName = "dragon-kernel-runner";

std::optional<std::string> read_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// DRAGON_KERNEL_RUNNER: the runner's path, overriding the one next to the executable.
const std::optional<std::string>& env_kernel_runner() {
  static const std::optional<std::string> value = read_variable("DRAGON_KERNEL_RUNNER");
  return value;
}

bool is_executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

}  // namespace

// DRAGON_RUNNER_NAMESPACES: off, auto or required; anything else is a user error.
RunnerNamespaces default_runner_namespaces() {
  static const RunnerNamespaces value = [] {
    std::optional<std::string> text = read_variable("DRAGON_RUNNER_NAMESPACES");
    if (!text || text->empty() || *text == "auto") return RunnerNamespaces::kWhereAvailable;
    if (*text == "off") return RunnerNamespaces::kOff;
    if (*text == "required") return RunnerNamespaces::kRequired;
    throw UserError("DRAGON_RUNNER_NAMESPACES='" + *text + "': expected off, auto or required");
  }();
  return value;
}

Expected<std::string> find_kernel_runner(const IsolationOptions& options) {
  if (!options.runner_path.empty()) {
    if (is_executable(options.runner_path)) return options.runner_path;
    return DRAGON_RUNTIME_FAILURE("find_kernel_runner", options.runner_path + " (IsolationOptions) is not executable",
                                  "");
  }
  if (const std::optional<std::string>& path = env_kernel_runner(); path && !path->empty()) {
    if (is_executable(*path)) return *path;
    return DRAGON_RUNTIME_FAILURE("find_kernel_runner", *path + " ($DRAGON_KERNEL_RUNNER) is not executable", "");
  }
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string beside;
  if (n > 0) {
    std::string exe(self, static_cast<size_t>(n));
    beside = exe.substr(0, exe.rfind('/') + 1) + kRunnerName;
    if (is_executable(beside)) return beside;
  }
  return DRAGON_RUNTIME_FAILURE("find_kernel_runner",
                                std::string("cannot find ") + kRunnerName + " (looked at " +
                                    (beside.empty() ? "the executable's directory" : beside) +
                                    "); set DRAGON_KERNEL_RUNNER to its path",
                                "");
}

namespace isolation {

std::vector<std::string> runner_environment(kernel_runner::JobKind kind) {
  static const std::vector<std::pair<std::string, std::optional<std::string>>> run_variables = [] {
    std::vector<std::pair<std::string, std::optional<std::string>>> v;
    for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
      v.emplace_back(name, read_variable(name));
    }
    return v;
  }();
  static const std::vector<std::pair<std::string, std::optional<std::string>>> compile_variables = [] {
    std::vector<std::pair<std::string, std::optional<std::string>>> v;
    for (const char* name : {"PATH", "TMPDIR", "LD_LIBRARY_PATH"}) v.emplace_back(name, read_variable(name));
    return v;
  }();
  std::vector<std::string> environment;
  for (const auto& [name, value] : kind == kernel_runner::JobKind::kCompileCpu ? compile_variables : run_variables) {
    if (value) environment.push_back(name + "=" + *value);
  }
  return environment;
}

}  // namespace isolation
}  // namespace dragon::harness
