// Keeping a secret given on this process's command line (dragon verify --seed N) from the
// processes it starts: /proc/PID/cmdline of any process is readable by every other
// process of its user, so the value is overwritten where the kernel shows it, in this
// process's own argument memory. Runners in namespaces of their own (isolated_candidate.h)
// see no other process at all; this is what keeps a seed secret where they cannot have
// them. Not the parent's memory (isolated_candidate.h: hide_parent_memory).
#pragma once

#include <string_view>

namespace dragon::harness {

// Overwrites with '*' the value of `option` wherever this process's command line gives
// it ("--seed 7" or "--seed=7"), before any runner starts. Returns how many values it
// hid; 0 where the option is absent or the command line cannot be found (not Linux).
int hide_option_value_in_command_line(std::string_view option);

}  // namespace dragon::harness
