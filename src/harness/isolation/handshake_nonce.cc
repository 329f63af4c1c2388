// fresh_handshake_nonce (handshake_nonce.h): 64 bits of std::random_device.
#include "handshake_nonce.h"

#include <random>

namespace dragon::harness::isolation {

uint64_t fresh_handshake_nonce() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace dragon::harness::isolation
