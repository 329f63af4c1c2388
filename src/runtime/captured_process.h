// Runs a compiler as a child process and captures what it prints (stdout and stderr
// together), for error logs. Private to the runtime; support/subprocess.h inherits output.
#pragma once

#include <string>
#include <vector>

#include "dragon/support/expected.h"

namespace dragon::runtime {

struct CapturedRun {
  int exit_code = -1;  // -1 when a signal ended it
  std::string output;
};

// Failure only when the program could not be started at all.
Expected<CapturedRun> run_captured(const std::vector<std::string>& argv);

}  // namespace dragon::runtime
