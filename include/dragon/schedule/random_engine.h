// The deterministic random engine of schedules: the Lehmer (minstd) generator TVM uses,
// state = state * 48271 mod (2^31 - 1), with sampling helpers built on it by our own
// integer code (no std:: distributions, whose results differ between libraries).
#pragma once

#include <cstdint>
#include <vector>

namespace dragon::schedule {

class RandomEngine {
 public:
  static constexpr int64_t kModulus = 2147483647;  // 2^31 - 1
  static constexpr int64_t kMultiplier = 48271;

  explicit RandomEngine(int64_t seed = 1) { this->seed(seed); }

  // Normalises any seed into [1, kModulus - 1] (0 would make the generator stick at 0).
  void seed(int64_t seed);
  int64_t state() const { return state_; }
  // The next state, in [1, kModulus - 1].
  int64_t next();
  // A seed for a child schedule, drawn from this engine (so forks differ and are
  // reproducible).
  int64_t fork_seed();

  // Uniform in [lo, hi), by rejection so every value is equally likely. Requires lo < hi.
  int64_t uniform_int(int64_t lo, int64_t hi);
  // Uniform in [0, 1).
  double uniform_real();
  // An index drawn with probability proportional to weights[i] (non-negative, sum > 0).
  int64_t categorical(const std::vector<double>& weights);
  // k distinct values of [0, n), in sampling order (partial Fisher-Yates).
  std::vector<int64_t> sample_without_replacement(int64_t n, int64_t k);

 private:
  int64_t state_ = 1;
};

// `n` factors whose product is `extent`: each prime's exponent spread uniformly over the
// n slots (a uniform composition, "stars and bars"), the innermost at most
// `max_innermost` (-1: unbounded) by rejection as in TVM; after 10,000 misses the
// innermost factor moves to the outermost slot. The sampler of sample_perfect_tile, shared
// with the search's decision sampler so both draw the same tiles from the same state.
std::vector<int64_t> sample_perfect_tile(RandomEngine& rng, int64_t extent, int n, int64_t max_innermost);

}  // namespace dragon::schedule
