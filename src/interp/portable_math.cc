// Series evaluations with a fixed number of terms: the result depends only on IEEE
// arithmetic, never on the platform's libm.
#include "portable_math.h"

#include <cmath>
#include <limits>

namespace dragon::interp {
namespace {
constexpr double kLn2 = 0.6931471805599453094172321214581766;
constexpr double kSqrtHalf = 0.7071067811865475244008443621048490;
}  // namespace

double portable_log(double x) {
  if (!(x > 0)) return x == 0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1)
  if (m < kSqrtHalf) {
    m *= 2;
    --e;
  }
  // ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.1716: t^2 <= 0.0295, so 14 terms
  // of the odd series reach below 1e-20 relative.
  double t = (m - 1) / (m + 1);
  double t2 = t * t;
  double sum = 0;
  for (int k = 14; k >= 0; --k) sum = sum * t2 + 1.0 / (2 * k + 1);
  return 2 * t * sum + e * kLn2;
}

double portable_exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.7) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0;
  // x = k ln2 + r with |r| <= ln2 / 2; e^r by its Taylor series (25 terms: 0.35^25/25! ~ 0).
  // ln2 split in two (Cody and Waite): k * kLn2High is exact, so r keeps its low bits.
  constexpr double kLn2High = 6.93147180369123816490e-01;
  constexpr double kLn2Low = 1.90821492927058770002e-10;
  double k = std::nearbyint(x / kLn2);
  double r = (x - k * kLn2High) - k * kLn2Low;
  double term = 1, sum = 1;
  for (int n = 1; n <= 25; ++n) {
    term = term * r / n;
    sum += term;
  }
  return std::ldexp(sum, static_cast<int>(k));
}

}  // namespace dragon::interp
