// Reports what the kernel's process sees of others, into R: i64[4] (the second argument;
// the first, X: f32[4], only has to be there):
//   R[0] processes listed in /proc    R[1] its parent's pid    R[2] its own pid
//   R[3] bytes other than NUL in /proc/PARENT/cmdline (-1 when it cannot be read)
#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

extern "C" void count_processes(void* const* args) {
  int64_t* r = static_cast<int64_t*>(args[1]);
  r[0] = 0;
  if (DIR* proc = opendir("/proc")) {
    for (dirent* e; (e = readdir(proc)) != nullptr;) r[0] += e->d_name[0] >= '0' && e->d_name[0] <= '9';
    closedir(proc);
  }
  r[1] = getppid();
  r[2] = getpid();
  std::string path = "/proc/" + std::to_string(getppid()) + "/cmdline";
  r[3] = -1;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    r[3] = 0;
    for (int c; (c = std::fgetc(f)) != EOF;) r[3] += c != 0;
    std::fclose(f);
  }
}
