// Leaves with status 0 before returning, os._exit-style: no handshake, kNoHandshake.
#include <unistd.h>

extern "C" void exit_zero(void* const* args) {
  static_cast<float*>(args[1])[0] = 1.0f;
  _exit(0);
}
