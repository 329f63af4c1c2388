// Prints a greeting, 20000 filler bytes and last words to stderr, then aborts: kCrashed with
// SIGABRT, the reason carrying the end of what it printed (and not all of it).
#include <cstdio>
#include <cstdlib>

extern "C" void noisy_abort(void* const*) {
  std::fputs("kernel says hello\n", stderr);
  for (int i = 0; i < 20000; ++i) std::fputc('x', stderr);
  std::fputs("\nlast words before abort\n", stderr);
  std::abort();
}
