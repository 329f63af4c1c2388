// hide_option_value_in_command_line (command_line_secret.h) and argument_memory
// (process_arguments.h): where the arguments lie comes from /proc/self/stat, and they are
// written in place, as setproctitle does.
#include "dragon/harness/command_line_secret.h"

#include "process_arguments.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dragon::harness {
namespace isolation {

ArgumentMemory argument_memory() {
  std::ifstream file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return {};
  std::istringstream fields(stat.substr(close + 1));
  std::vector<std::string> rest;  // field 3 onwards
  for (std::string f; fields >> f;) rest.push_back(f);
  constexpr size_t kArgStart = 48 - 3;  // then arg_end, env_start, env_end
  if (rest.size() <= kArgStart + 3) return {};
  return {std::stoull(rest[kArgStart]), std::stoull(rest[kArgStart + 1]), std::stoull(rest[kArgStart + 2]),
          std::stoull(rest[kArgStart + 3])};
}

}  // namespace isolation

int hide_option_value_in_command_line(std::string_view option) {
  const isolation::ArgumentMemory memory = isolation::argument_memory();
  const uintptr_t start = memory.arg_start, end = memory.arg_end;
  if (start == 0 || end <= start) return 0;
  char* const first = reinterpret_cast<char*>(start);
  char* const last = reinterpret_cast<char*>(end);
  int hidden = 0;
  bool value_next = false;
  for (char* arg = first; arg < last;) {
    const size_t length = strnlen(arg, static_cast<size_t>(last - arg));
    std::string_view text(arg, length);
    if (value_next) {
      std::memset(arg, '*', length);
      ++hidden;
      value_next = false;
    } else if (text == option) {
      value_next = true;
    } else if (text.size() > option.size() && text.substr(0, option.size()) == option && text[option.size()] == '=') {
      std::memset(arg + option.size() + 1, '*', length - option.size() - 1);
      ++hidden;
    }
    arg += length + 1;
  }
  return hidden;
}

}  // namespace dragon::harness
