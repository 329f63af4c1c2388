// The prelude of generated CPU code. The f16 and bf16 conversions are written from the
// IEEE formats (not copied from support/half.cc) and must round exactly like it: the
// codegen tests compare them bit for bit over many values.
#include "cpu_prelude.h"

#include "dragon/codegen/c_printer.h"

namespace dragon::codegen {

std::string cpu_prelude() {
  std::string text = R"(#ifndef DRAGON_CPU_PRELUDE
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
)";
  text += common_prelude();
  text += R"(// 16-bit floats are stored as their bit patterns; arithmetic happens in float.
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
#endif  // DRAGON_CPU_PRELUDE
)";
  return text;
}

}  // namespace dragon::codegen
