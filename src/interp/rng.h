// A deterministic random stream for input generation: xoshiro256** seeded through
// splitmix64, with uniform and normal draws of our own (no std:: distributions, which
// differ between standard libraries). Not cryptographic.
#pragma once

#include <cstdint>

namespace dragon::interp {

class Rng {
 public:
  // Stream `stream` of `seed`: different streams of one seed are independent.
  Rng(uint64_t seed, uint64_t stream);

  uint64_t next();
  // Uniform in [0, 1), 53 random bits.
  double uniform();
  // Uniform integer in [0, n), n > 0, unbiased (rejection).
  uint64_t below(uint64_t n);
  // N(0, 1) by the polar form of Box-Muller (Marsaglia), with portable_log.
  double normal();

 private:
  uint64_t state_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace dragon::interp
