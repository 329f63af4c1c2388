// Running a child program: PATH lookup, extra environment, wall time and how it ended.
// Errors starting it are values, never exits of the caller.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dragon {

struct ProcessResult {
  bool started = false;
  std::string start_error;  // why it could not start (exec failed: not found, not executable)
  int exit_code = -1;       // when it exited normally
  int signal = 0;           // when a signal ended it
  double wall_seconds = 0;
};

// The path execvp would run for `name` (a name with a '/' is taken as a path).
std::optional<std::string> find_executable(const std::string& name);

// Runs argv with the parent's environment plus `extra_env` (which overrides), waits for
// it, and reports. stdout and stderr are inherited.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& extra_env);

}  // namespace dragon
