// The Lehmer generator and the sampling built on it: integer arithmetic only, so the same
// seed gives the same decisions on every machine and library.
#include "dragon/schedule/random_engine.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "dragon/support/error.h"

namespace dragon::schedule {

void RandomEngine::seed(int64_t seed) {
  seed %= kModulus;
  if (seed < 0) seed += kModulus;
  state_ = seed == 0 ? 1 : seed;
}

int64_t RandomEngine::next() {
  // state < 2^31 and the multiplier < 2^16, so the product fits in 64 bits.
  state_ = state_ * kMultiplier % kModulus;
  return state_;
}

int64_t RandomEngine::fork_seed() {
  // Mixes a fresh draw so the child's stream does not simply continue ours.
  return next() * 32767 % 1999999973;
}

int64_t RandomEngine::uniform_int(int64_t lo, int64_t hi) {
  DRAGON_CHECK(lo < hi, "uniform_int over an empty range [{}, {})", lo, hi);
  const int64_t span = hi - lo;
  const int64_t range = kModulus - 1;  // next() - 1 is uniform over [0, range)
  if (span >= range) {
    // Wider than one draw: combine two (spans this large never occur in schedules).
    int64_t value = (next() - 1) * range + (next() - 1);
    return lo + value % span;
  }
  // Reject the top partial bucket so every residue is equally likely.
  const int64_t limit = range - range % span;
  for (;;) {
    int64_t draw = next() - 1;
    if (draw < limit) return lo + draw % span;
  }
}

double RandomEngine::uniform_real() {
  return static_cast<double>(next() - 1) / static_cast<double>(kModulus - 1);
}

int64_t RandomEngine::categorical(const std::vector<double>& weights) {
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  DRAGON_CHECK(!weights.empty() && total > 0, "categorical over weights summing to {}", total);
  double point = uniform_real() * total;
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    sum += weights[i];
    if (point < sum && weights[i] > 0) return static_cast<int64_t>(i);
  }
  // Rounding left the point at the very top: the last candidate with weight.
  for (size_t i = weights.size(); i-- > 0;) {
    if (weights[i] > 0) return static_cast<int64_t>(i);
  }
  return 0;
}

std::vector<int64_t> RandomEngine::sample_without_replacement(int64_t n, int64_t k) {
  DRAGON_CHECK(0 <= k && k <= n, "sampling {} of {} without replacement", k, n);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = 0; i < k; ++i) std::swap(order[i], order[uniform_int(i, n)]);
  order.resize(k);
  return order;
}

namespace {

// Prime factorization by trial division: extents are small enough.
std::vector<std::pair<int64_t, int>> factorize(int64_t n) {
  std::vector<std::pair<int64_t, int>> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    int e = 0;
    while (n % p == 0) {
      n /= p;
      ++e;
    }
    if (e > 0) out.emplace_back(p, e);
  }
  if (n > 1) out.emplace_back(n, 1);
  return out;
}

}  // namespace

std::vector<int64_t> sample_perfect_tile(RandomEngine& rng, int64_t extent, int n, int64_t max_innermost) {
  if (n <= 1) return {extent};
  const std::vector<std::pair<int64_t, int>> primes = factorize(extent);
  for (int attempt = 0;; ++attempt) {
    std::vector<int64_t> result(n, 1);
    for (auto [p, e] : primes) {
      std::vector<int64_t> bars = rng.sample_without_replacement(e + n - 1, n - 1);
      std::sort(bars.begin(), bars.end());
      bars.push_back(e + n - 1);
      int64_t last = -1;
      for (int i = 0; i < n; ++i) {
        for (int64_t k = bars[i] - last - 1; k > 0; --k) result[i] *= p;
        last = bars[i];
      }
    }
    if (max_innermost == -1 || result.back() <= max_innermost) return result;
    if (attempt == 10000) {
      result.front() *= result.back();
      result.back() = 1;
      return result;
    }
  }
}

}  // namespace dragon::schedule
