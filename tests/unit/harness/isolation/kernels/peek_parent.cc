// Tries to read the harness's memory: P: i64[2] holds the address and length of a secret
// in the parent (a test hands them over, as if the kernel had found them); R: i64[4] says
//   R[0] 1 if /proc/PARENT/mem opened     R[1] bytes pread from it
//   R[2] 1 if a read returned the secret  R[3] bytes process_vm_readv read (or -errno)
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

extern "C" void peek_parent(void* const* args) {
  const int64_t* p = static_cast<const int64_t*>(args[0]);
  int64_t* r = static_cast<int64_t*>(args[1]);
  const char expected[] = "dragon-parent-secret-7f3a";
  char seen[64] = {};
  auto length = static_cast<size_t>(p[1]) < sizeof seen ? static_cast<size_t>(p[1]) : sizeof seen;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(getppid()));
  int fd = open(path, O_RDONLY);
  r[0] = fd >= 0;
  r[1] = fd >= 0 ? pread(fd, seen, length, static_cast<off_t>(p[0])) : -errno;
  if (fd >= 0) close(fd);
  r[2] = std::memcmp(seen, expected, sizeof expected - 1) == 0;
  std::memset(seen, 0, sizeof seen);
  iovec local{seen, length}, remote{reinterpret_cast<void*>(p[0]), length};
  ssize_t n = process_vm_readv(getppid(), &local, 1, &remote, 1, 0);
  r[3] = n >= 0 ? n : -errno;
  if (std::memcmp(seen, expected, sizeof expected - 1) == 0) r[2] = 1;
}
