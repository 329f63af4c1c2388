// Writes part of its output, then stores through a null pointer: the run must be kCrashed
// with SIGSEGV, and the partial output must not reach the caller.
#include <cstdint>

extern "C" void segfault(void* const* args) {
  float* y = static_cast<float*>(args[1]);
  y[0] = 42.0f;
  volatile int* nowhere = nullptr;
  *nowhere = 1;
}
