// dragon-model: the commands that run the little dragon (train, propose) live in a second
// program built beside `dragon`, the only one that links libtorch (seconds to load), so
// every other dragon command starts without it. `dragon train` and `dragon propose`
// replace themselves by it; `dragon optimize` runs it as a child.
#pragma once

#include <string>

namespace dragon::cli {

// dragon-model beside this program; UserError when it is not there (a build without libtorch).
std::string model_binary_path();

// Replaces this process by dragon-model with the same arguments (read back from
// /proc/self/cmdline, so nothing is lost in re-spelling them). Returns only by throwing.
[[noreturn]] void exec_model_binary();

}  // namespace dragon::cli
