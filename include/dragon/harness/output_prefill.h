// What the harness writes into a candidate's outputs before each run, so that elements it
// never writes show: a NaN sentinel whose payload no arithmetic produces (a written NaN is
// then told apart from an unwritten element), or seeded random garbage for the repeated
// run of the determinism check. Not the inputs (interp/input_generator.h).
#pragma once

#include <cstdint>

#include "dragon/tensor/host_tensor.h"

namespace dragon::harness {

// Floats: a quiet NaN with the payload 0x5a5a... (not the canonical NaN of 0/0 or nan());
// integers and bool: 0x5a bytes.
void fill_sentinel(tensor::HostTensor& tensor);

// Floats: finite values of either sign spread over many magnitudes; integers: random bits;
// bool: random bytes other than 0 and 1. Different seeds give different garbage.
void fill_garbage(tensor::HostTensor& tensor, uint64_t seed);

// Garbage that equals what an earlier run wrote at the same element (16-bit types have few
// values: a bf16 output of 86,400 elements meets about 30 such) cannot tell an element the
// repeated run skipped from one it wrote again: those elements of `garbage` get the
// sentinel instead, which no run writes. `written` has garbage's type and size.
void keep_garbage_off(tensor::HostTensor& garbage, const tensor::HostTensor& written);

}  // namespace dragon::harness
