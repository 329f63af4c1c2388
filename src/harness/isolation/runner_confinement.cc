// confine_runner (runner_confinement.h): prctl and capset through raw system calls (no
// libcap here).
#include "runner_confinement.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dragon::harness::kernel_runner {
namespace {

RuntimeFailure confinement_failure(const char* api) {
  return RuntimeFailure{api, std::string("cannot confine the runner: ") + std::strerror(errno), "",
                                 "runner_confinement.cc"};
}

}  // namespace

Status confine_runner() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return confinement_failure("prctl(PR_SET_NO_NEW_PRIVS)");
  // The bounding set needs CAP_SETPCAP to shrink; without it the process has nothing to
  // drop there that no_new_privs would not already keep it from using.
  for (int cap = 0; ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM) break;
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, none) != 0) return confinement_failure("capset");
  return {};
}

}  // namespace dragon::harness::kernel_runner
