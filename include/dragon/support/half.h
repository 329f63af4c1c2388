// IEEE binary16 (f16) and bfloat16 conversions with round-to-nearest-even,
// handling subnormals, infinities and NaN. Storage is a plain uint16_t.
#pragma once

#include <cstdint>

namespace dragon {

uint16_t float_to_f16_bits(float value);
float f16_bits_to_float(uint16_t bits);
uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(uint16_t bits);

// Rounds a double to the nearest f16 / bf16 / f32 value (returned widened to double).
// A double rounded through float first could round twice; these round once.
double round_to_f16(double value);
double round_to_bf16(double value);
double round_to_f32(double value);

}  // namespace dragon
