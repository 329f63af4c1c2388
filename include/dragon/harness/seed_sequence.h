// The harness's random numbers: a splitmix64 stream from one seed (the same numbers on
// every machine), and the secret seed of a verification drawn from std::random_device.
// Not the input generator's streams (interp/input_generator.h).
#pragma once

#include <cstdint>

namespace dragon::harness {

class SeedSequence {
 public:
  explicit SeedSequence(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, bound), bound > 0.
  uint64_t below(uint64_t bound) { return next() % bound; }

 private:
  uint64_t state_;
};

// 64 bits from the operating system's entropy: a seed no candidate can predict.
uint64_t secret_seed();

}  // namespace dragon::harness
