// Bit-exact f16 and bf16 conversions (round to nearest, ties to even).
#include "dragon/support/half.h"

#include <bit>
#include <cmath>
#include <limits>

namespace dragon {

uint16_t float_to_f16_bits(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    if (abs == 0x7f800000u) return sign | 0x7c00u;
    return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x3ffu);  // quiet NaN, keep payload bits
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: value = mantissa * 2^-24 after rounding.
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal: +-0
    int exponent = static_cast<int>(abs >> 23);
    uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    int shift = 126 - exponent;  // 113 - exponent + 13
    uint32_t half_mantissa = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return sign | static_cast<uint16_t>(half_mantissa);
  }
  // Normal: rebias exponent from 127 to 15 and round the mantissa from 23 to 10 bits.
  uint32_t rebased = abs - 0x38000000u;
  uint32_t result = rebased >> 13;
  uint32_t remainder = rebased & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u))) ++result;
  return sign | static_cast<uint16_t>(result);
}

float f16_bits_to_float(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_bf16_bits(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding_bias) >> 16);
}

float bf16_bits_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

namespace {

// Rounds |value| to a binary format with `mantissa_bits` explicit bits, minimum normal
// exponent `min_exponent` and maximum finite value `max_finite`; ties to even. Works on
// doubles so that one rounding step happens, never two.
double round_to_format(double value, int mantissa_bits, int min_exponent, double max_finite) {
  if (!std::isfinite(value) || value == 0.0) return value;
  double magnitude = std::fabs(value);
  int exponent = std::ilogb(magnitude);
  if (exponent < min_exponent) exponent = min_exponent;  // subnormal range has a fixed quantum
  double quantum = std::ldexp(1.0, exponent - mantissa_bits);
  double rounded = std::nearbyint(magnitude / quantum) * quantum;  // default mode: ties to even
  // Overflow: values at or beyond max_finite + half a quantum of the top binade become inf.
  if (rounded > max_finite) rounded = std::numeric_limits<double>::infinity();
  return std::copysign(rounded, value);
}

}  // namespace

double round_to_f16(double value) { return round_to_format(value, 10, -14, 65504.0); }
double round_to_bf16(double value) {
  return round_to_format(value, 7, -126, std::ldexp(2.0 - std::ldexp(1.0, -7), 127));
}
double round_to_f32(double value) { return static_cast<double>(static_cast<float>(value)); }

}  // namespace dragon
