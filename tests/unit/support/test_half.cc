// f16 and bf16 conversions: exhaustive round trips and rounding at the edges.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "dragon/support/half.h"

namespace dragon {
namespace {

TEST(Half, EveryF16PatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = f16_bits_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(f16_bits_to_float(float_to_f16_bits(value))));
      continue;
    }
    EXPECT_EQ(float_to_f16_bits(value), bits) << "pattern " << bits;
    EXPECT_EQ(round_to_f16(value), static_cast<double>(value));
  }
}

TEST(Half, EveryBf16PatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = bf16_bits_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    EXPECT_EQ(float_to_bf16_bits(value), bits);
    EXPECT_EQ(round_to_bf16(value), static_cast<double>(value));
  }
}

TEST(Half, F16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  EXPECT_EQ(float_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties go up to even.
  EXPECT_EQ(float_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);  // overflows to inf
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);      // smallest subnormal
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);      // half of it ties to 0
  EXPECT_EQ(float_to_f16_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_f16_bits(-0.0f), 0x8000);
}

TEST(Half, DoubleRoundingAgreesWithBitConversion) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-30, 17);
  for (int i = 0; i < 200000; ++i) {
    float value = std::ldexp(mantissa(rng), exponent(rng));
    EXPECT_EQ(round_to_f16(value), static_cast<double>(f16_bits_to_float(float_to_f16_bits(value)))) << value;
    EXPECT_EQ(round_to_bf16(value), static_cast<double>(bf16_bits_to_float(float_to_bf16_bits(value)))) << value;
  }
}

TEST(Half, RoundToF32IsSingleRounding) {
  double halfway = 1.0 + std::ldexp(1.0, -24);  // exactly between two floats
  EXPECT_EQ(round_to_f32(halfway), 1.0);
  EXPECT_EQ(round_to_f32(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace dragon
