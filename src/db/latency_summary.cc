// summarize_latency: the median of a record's samples and a distribution-free confidence
// interval of it. Timings have heavy right tails (preemption, clock changes), so the
// interval comes from order statistics, not from a normal approximation of the mean (the
// timer's stopping rule in harness/timing uses that one).
#include <algorithm>
#include <cmath>
#include <vector>

#include "dragon/db/record.h"

namespace dragon::db {
namespace {

// The largest rank r (1-based) with P(X < r) <= 0.025 for X ~ Binomial(n, 1/2); then
// [x_(r), x_(n+1-r)] covers the median with probability >= 95%. 0 when no rank does
// (n < 6).
int64_t lower_median_rank(int64_t n) {
  const double log_half_power = -static_cast<double>(n) * std::log(2.0);
  const double log_n_factorial = std::lgamma(static_cast<double>(n) + 1);
  double below = 0;  // P(X < rank)
  int64_t rank = 0;
  for (int64_t i = 0; i <= n / 2; ++i) {
    const double log_choose =
        log_n_factorial - std::lgamma(static_cast<double>(i) + 1) - std::lgamma(static_cast<double>(n - i) + 1);
    const double with_i = below + std::exp(log_choose + log_half_power);  // P(X < i + 1)
    if (with_i > 0.025) break;
    below = with_i;
    rank = i + 1;
  }
  return rank;
}

}  // namespace

std::optional<LatencySummary> summarize_latency(std::span<const float> samples_ms) {
  if (samples_ms.empty()) return std::nullopt;
  std::vector<double> sorted(samples_ms.begin(), samples_ms.end());
  std::sort(sorted.begin(), sorted.end());
  const auto n = static_cast<int64_t>(sorted.size());
  LatencySummary summary;
  summary.samples = n;
  summary.min_ms = sorted.front();
  summary.max_ms = sorted.back();
  summary.median_ms = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  if (int64_t rank = lower_median_rank(n); rank > 0) {
    summary.median_ci95 = LatencySummary::Interval{sorted[rank - 1], sorted[n - rank]};
  }
  return summary;
}

}  // namespace dragon::db
