// xoshiro256** (Blackman and Vigna, public domain algorithm), written from its
// description; seeding by splitmix64 so that nearby seeds give unrelated states.
#include "rng.h"

#include <cmath>

#include "portable_math.h"

namespace dragon::interp {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(uint64_t seed, uint64_t stream) {
  // Mix the seed and the stream separately, then combine: (seed, stream) pairs that
  // differ in either give different states.
  uint64_t a = seed, b = stream ^ 0x6a09e667f3bcc909ull;
  uint64_t key = splitmix64(a) ^ rotl(splitmix64(b), 17);
  for (uint64_t& word : state_) word = splitmix64(key);
}

uint64_t Rng::next() {
  uint64_t result = rotl(state_[1] * 5, 7) * 9;
  uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

uint64_t Rng::below(uint64_t n) {
  // Reject the top partial copy of [0, n) so every value is equally likely.
  uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % n);
  for (;;) {
    uint64_t x = next();
    if (x < limit) return x % n;
  }
}

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  for (;;) {
    double u = 2 * uniform() - 1, v = 2 * uniform() - 1;
    double s = u * u + v * v;
    if (s >= 1 || s == 0) continue;
    double factor = std::sqrt(-2 * portable_log(s) / s);  // sqrt is correctly rounded by IEEE
    spare_ = v * factor;
    has_spare_ = true;
    return u * factor;
  }
}

}  // namespace dragon::interp
