// Reports what the kernel's process can see, into R: i64[8] (the second argument; the
// first, X: f32[300], only has to be there):
//   R[0] environment entries        R[1] entries not named LD_LIBRARY_PATH / CUDA_*
//   R[2] command-line arguments     R[3] open descriptors other than 0-3
//   R[4] memfd mappings             R[5] bytes of memfd mappings
//   R[6] arguments inside a memfd mapping   R[7] arguments aligned to 256 bytes
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

extern "C" void probe(void* const* args) {
  int64_t r[8] = {};
  for (char** e = environ; *e != nullptr; ++e) {
    ++r[0];
    if (std::strncmp(*e, "LD_LIBRARY_PATH=", 16) != 0 && std::strncmp(*e, "CUDA_", 5) != 0) ++r[1];
  }
  if (FILE* f = std::fopen("/proc/self/cmdline", "r")) {
    for (int c; (c = std::fgetc(f)) != EOF;) r[2] += c == 0;
    std::fclose(f);
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    for (dirent* e; (e = readdir(d)) != nullptr;) {
      if (e->d_name[0] == '.') continue;
      int fd = std::atoi(e->d_name);
      if (fd > 3 && fd != dirfd(d)) ++r[3];
    }
    closedir(d);
  }
  uintptr_t lo = 0, hi = 0;
  if (FILE* f = std::fopen("/proc/self/maps", "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, f)) {
      if (std::strstr(line, "memfd:") == nullptr) continue;
      unsigned long start = 0, end = 0;
      if (std::sscanf(line, "%lx-%lx", &start, &end) != 2) continue;
      ++r[4];
      r[5] += static_cast<int64_t>(end - start);
      lo = start;
      hi = end;
    }
    std::fclose(f);
  }
  for (int i = 0; i < 2; ++i) {
    auto p = reinterpret_cast<uintptr_t>(args[i]);
    r[6] += p >= lo && p < hi;
    r[7] += p % 256 == 0;
  }
  std::memcpy(args[1], r, sizeof r);
}
