// Writes a well-formed reply with a made-up nonce on the runner's control socket (fd 3),
// then exits with status 0: a handshake it forged must not count.
#include <unistd.h>

#include <cstdint>
#include <cstring>

extern "C" void forged_handshake(void* const*) {
  // magic, nonce, status, five empty strings (failure api, message, log, where; module
  // path), no timing samples, then the GPU state: an empty name, four integers (clocks and
  // temperature) and an empty driver version; last, no red-zone violations. Zero bytes are
  // empty strings and zeros.
  unsigned char reply[4 + 8 + 4 + 5 * 8 + 8 + 8 + 4 * 8 + 8 + 8] = {};
  uint32_t magic = 0x4b524744, success = 1;
  uint64_t nonce = 12345;
  std::memcpy(reply, &magic, 4);
  std::memcpy(reply + 4, &nonce, 8);
  std::memcpy(reply + 12, &success, 4);
  ssize_t written = write(3, reply, sizeof reply);
  (void)written;
  _exit(0);
}
