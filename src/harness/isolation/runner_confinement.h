// What the runner gives up before it touches untrusted code: every capability (a root
// runner could otherwise read the harness's memory through /proc/PID/mem or ptrace) and
// the means to regain them (no_new_privs). The parent's half is child_process.h's
// hide_parent_memory. Not a sandbox: files and signals stay as the user may use them.
#pragma once

#include "dragon/support/expected.h"

namespace dragon::harness::kernel_runner {

Status confine_runner();

}  // namespace dragon::harness::kernel_runner
