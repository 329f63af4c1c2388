// The CPU prelude's vectorizable math (dragon_expf, dragon_fmaxf, dragon_fminf), compiled
// by the same compiler and flags as generated code, in a loop the compiler vectorizes:
// exp within 2 ulp of the exact value over a sweep of every float exponent and the
// special values expf has; max and min with expf's NaN rule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "codegen_test_util.h"
#include "cpu_prelude.h"
#include "dragon/runtime/cpu_module.h"

namespace dragon::codegen {
namespace {

// args: in (float*), out (float*), count (int64_t*), op (int64_t*: 0 exp, 1 max, 2 min), other (float*).
const char* kHarness = R"(
extern "C" void prelude_math(void* const* args) {
  const float* in = (const float*)args[0];
  float* out = (float*)args[1];
  const int64_t n = *(const int64_t*)args[2];
  const int64_t op = *(const int64_t*)args[3];
  const float* other = (const float*)args[4];
  if (op == 0) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = dragon_expf(in[i]);
  } else if (op == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = dragon_fmaxf(in[i], other[i]);
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = dragon_fminf(in[i], other[i]);
  }
}
)";

runtime::CpuEntry prelude_math() {
  static runtime::CpuEntry entry = [] {
    auto module = runtime::CpuModule::compile(cpu_prelude() + kHarness, {}, testing::test_cache());
    if (!module.ok()) ADD_FAILURE() << module.error().message;
    static std::shared_ptr<runtime::CpuModule> keep = module.value();
    return keep->entry("prelude_math").value();
  }();
  return entry;
}

std::vector<float> run(int64_t op, const std::vector<float>& in, const std::vector<float>& other) {
  std::vector<float> out(in.size());
  int64_t n = static_cast<int64_t>(in.size());
  void* const args[] = {const_cast<float*>(in.data()), out.data(), &n, &op, const_cast<float*>(other.data())};
  prelude_math()(args);
  return out;
}

// Distance in units in the last place between a float and the exact value (as a double).
double ulp_error(float got, double exact) {
  if (std::isinf(exact) || exact > std::numeric_limits<float>::max()) return std::isinf(got) ? 0 : 1e9;
  const float rounded = static_cast<float>(exact);
  const float next = std::nextafter(rounded, std::numeric_limits<float>::infinity());
  const double ulp = rounded == 0 ? std::numeric_limits<float>::denorm_min() : static_cast<double>(next) - rounded;
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

TEST(CpuPrelude, ExpIsWithinTwoUlpOfExactOverEveryExponent) {
  // Every float in [-104, 89] at a stride of bit patterns that visits every exponent
  // densely (about 5 million values), plus the ends of the range.
  std::vector<float> in;
  for (float start : {0.0f, -0.0f}) {
    uint32_t bits;
    std::memcpy(&bits, &start, 4);
    for (uint32_t step = 0;; step += 397) {
      uint32_t b = bits + step;
      float x;
      std::memcpy(&x, &b, 4);
      if (std::isnan(x) || x > 89.0f || x < -104.0f) break;
      in.push_back(x);
    }
  }
  for (float x : {88.72283f, 88.7228394f, -87.33654f, -103.97208f, -88.0f, -100.0f, 1e-10f, -1e-10f}) in.push_back(x);
  const std::vector<float> out = run(0, in, std::vector<float>(in.size()));
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double error = ulp_error(out[i], std::exp(static_cast<double>(in[i])));
    if (error > worst) worst = error, worst_x = in[i];
  }
  std::printf("dragon_expf: %zu values, worst %.3f ulp at %.9g\n", in.size(), worst, worst_x);
  EXPECT_LE(worst, 2.0) << "at x = " << worst_x;
}

TEST(CpuPrelude, ExpSpecialValuesAsExpf) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> in = {0.0f, -0.0f, inf, -inf, nan, 89.0f, 1000.0f, -104.0f, -1000.0f, 1e30f, -1e30f};
  const std::vector<float> out = run(0, in, std::vector<float>(in.size()));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], inf);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_TRUE(std::isnan(out[4]));
  EXPECT_EQ(out[5], inf) << "exp(89) overflows float";
  EXPECT_EQ(out[6], inf);
  EXPECT_EQ(out[7], 0.0f) << "exp(-104) is below half the smallest subnormal";
  EXPECT_EQ(out[8], 0.0f);
  EXPECT_EQ(out[9], inf);
  EXPECT_EQ(out[10], 0.0f);
}

TEST(CpuPrelude, MaxAndMinTakeTheNumberOverNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a = {1.0f, -2.0f, nan, 3.0f, nan, -0.5f};
  const std::vector<float> b = {2.0f, -3.0f, 4.0f, nan, nan, -0.5f};
  const std::vector<float> max = run(1, a, b), min = run(2, a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    const float want_max = std::fmax(a[i], b[i]), want_min = std::fmin(a[i], b[i]);
    if (std::isnan(want_max)) {
      EXPECT_TRUE(std::isnan(max[i])) << i;
      EXPECT_TRUE(std::isnan(min[i])) << i;
    } else {
      EXPECT_EQ(max[i], want_max) << i;
      EXPECT_EQ(min[i], want_min) << i;
    }
  }
}

}  // namespace
}  // namespace dragon::codegen
