#ifndef DRAGON_CPU_PRELUDE
#define DRAGON_CPU_PRELUDE
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#define DRAGON_INLINE static inline
#define DRAGON_INF_F32 __builtin_inff()
#define DRAGON_NAN_F32 __builtin_nanf("")
#define DRAGON_INF_F64 __builtin_inf()
#define DRAGON_NAN_F64 __builtin_nan("")
// Index arithmetic and conversions with the IR's semantics.
template <typename T> DRAGON_INLINE T dragon_floordiv(T a, T b) {
  T q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;
}
template <typename T> DRAGON_INLINE T dragon_floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
DRAGON_INLINE float dragon_floordiv(float a, float b) { return floorf(a / b); }
DRAGON_INLINE double dragon_floordiv(double a, double b) { return floor(a / b); }
DRAGON_INLINE float dragon_floormod(float a, float b) { return a - floorf(a / b) * b; }
DRAGON_INLINE double dragon_floormod(double a, double b) { return a - floor(a / b) * b; }
template <typename T> DRAGON_INLINE T dragon_min(T a, T b) { return b < a ? b : a; }
template <typename T> DRAGON_INLINE T dragon_max(T a, T b) { return a < b ? b : a; }
// |x| wraps: the most negative value is its own absolute value.
template <typename T> DRAGON_INLINE T dragon_iabs(T a) { return a < 0 ? (T)(0ULL - (unsigned long long)a) : a; }
// float -> int truncates toward zero and saturates; NaN gives 0.
template <typename F> DRAGON_INLINE int8_t dragon_f2i8(F x) {
  return x != x ? (int8_t)0 : x <= (F)-128 ? (int8_t)-128 : x >= (F)128 ? (int8_t)127 : (int8_t)x;
}
template <typename F> DRAGON_INLINE int32_t dragon_f2i32(F x) {
  return x != x ? 0 : x <= (F)-2147483648.0 ? (int32_t)(-2147483647 - 1) : x >= (F)2147483648.0 ? (int32_t)2147483647 : (int32_t)x;
}
template <typename F> DRAGON_INLINE int64_t dragon_f2i64(F x) {
  return x != x ? 0
       : x <= (F)-9223372036854775808.0 ? (int64_t)(-9223372036854775807LL - 1)
       : x >= (F)9223372036854775808.0 ? (int64_t)9223372036854775807LL : (int64_t)x;
}
// 16-bit floats are stored as their bit patterns; arithmetic happens in float.
struct dragon_f16 { uint16_t bits; };
struct dragon_bf16 { uint16_t bits; };
// value rounded to nearest even into a format with `mant` fraction bits and exponent `bias`.
DRAGON_INLINE uint16_t dragon_round_to_bits(double v, int mant, int bias, int max_field) {
  uint16_t sign = std::signbit(v) ? (uint16_t)0x8000 : (uint16_t)0;
  double a = std::fabs(v);
  if (a != a) return (uint16_t)(sign | (max_field << mant) | (1 << (mant - 1)));
  if (std::isinf(a)) return (uint16_t)(sign | (max_field << mant));
  int min_exp = 1 - bias;
  int e = min_exp;
  if (a >= std::ldexp(1.0, min_exp)) { std::frexp(a, &e); e -= 1; }  // a in [2^e, 2^(e+1))
  double q = std::nearbyint(std::ldexp(a, mant - e));  // exact scaling, then round half to even
  if (e > min_exp - 1 && q >= std::ldexp(1.0, mant + 1)) { q = std::ldexp(q, -1); e += 1; }
  if (e > max_field - 1 - bias) return (uint16_t)(sign | (max_field << mant));
  uint32_t qi = (uint32_t)q;
  if (qi < (1u << mant)) return (uint16_t)(sign | qi);  // subnormal or zero
  return (uint16_t)(sign | ((uint32_t)(e + bias) << mant) | (qi - (1u << mant)));
}
DRAGON_INLINE dragon_f16 dragon_f16_from_double(double v) { return dragon_f16{dragon_round_to_bits(v, 10, 15, 31)}; }
DRAGON_INLINE dragon_bf16 dragon_bf16_from_double(double v) { return dragon_bf16{dragon_round_to_bits(v, 7, 127, 255)}; }
DRAGON_INLINE float dragon_f16_to_float(dragon_f16 h) {
  uint32_t sign = (uint32_t)(h.bits & 0x8000) << 16, field = (h.bits >> 10) & 31, frac = h.bits & 1023;
  uint32_t bits;
  if (field == 31) {
    bits = sign | 0x7f800000u | (frac << 13);
  } else if (field == 0) {
    float m = std::ldexp((float)frac, -24);  // subnormals and zero are exact in float
    return sign ? -m : m;
  } else {
    bits = sign | ((field - 15 + 127) << 23) | (frac << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
DRAGON_INLINE float dragon_bf16_to_float(dragon_bf16 h) {
  uint32_t bits = (uint32_t)h.bits << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
// exp, max and min of float in plain arithmetic, so a vectorized loop keeps them in vector
// registers (libm's expf and fmaxf are calls the compiler will not vectorize without
// -ffast-math, which we do not use). exp: x = n ln2 + r with |r| <= ln2/2 (ln2 split in
// two, so n ln2 is exact), e^r by a degree-7 polynomial, times 2^n built from exponent
// bits in two halves so that subnormal results round once. Within 2 ulp of the exact value
// (tests/unit/codegen/test_cpu_prelude.cc sweeps 5.6 million floats of every exponent: worst
// 0.96 ulp); inf, -inf, NaN, overflow to inf and underflow to 0 as expf.
DRAGON_INLINE float dragon_expf(float x) {
  float c = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  c = c != c ? 0.0f : c;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  float n = (c * 1.44269504088896341f + shifter) - shifter;
  float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = (p * r) * r + r + 1.0f;
  int32_t k = (int32_t)n, k1 = k >> 1, k2 = k - k1;
  int32_t b1 = (k1 + 127) << 23, b2 = (k2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  float e = (y * s1) * s2;
  return x != x ? x : e;
}
// A NaN operand yields the other operand, as fmaxf / fminf and the interpreter do.
DRAGON_INLINE float dragon_fmaxf(float a, float b) { return (a > b || b != b) ? a : b; }
DRAGON_INLINE float dragon_fminf(float a, float b) { return (a < b || b != b) ? a : b; }
#endif  // DRAGON_CPU_PRELUDE

// gelu
extern "C" void dragon_entry_impl(dragon_f16* __restrict__ X, dragon_f16* __restrict__ gelu) {
  for (int32_t i0 = 0; i0 < 8; ++i0) {
    for (int32_t i1 = 0; i1 < 32; ++i1) {
      gelu[((i0 * 32) + i1)] = dragon_f16_from_double(((0x1p-1f * dragon_f16_to_float(X[((i0 * 32) + i1)])) * (0x1p+0f + tanhf((0x1.988454p-1f * (dragon_f16_to_float(X[((i0 * 32) + i1)]) + (0x1.6e4e26p-5f * ((dragon_f16_to_float(X[((i0 * 32) + i1)]) * dragon_f16_to_float(X[((i0 * 32) + i1)])) * dragon_f16_to_float(X[((i0 * 32) + i1)])))))))));
    }
  }
}
extern "C" void dragon_entry(void* const* args) {
  dragon_entry_impl((dragon_f16*)args[0], (dragon_f16*)args[1]);
}
