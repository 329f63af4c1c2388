// The f64 twin of a function: every float buffer, immediate and cast of the function
// promoted to f64, so that the interpreter computes it with (almost) no rounding error.
// What the harness calibrates per-dtype tolerances against; not a scheduling transform.
#pragma once

#include "dragon/ir/function.h"

namespace dragon::harness {

// The same computation with f16, bf16 and f32 replaced by f64 everywhere (parameters,
// intermediate buffers, immediates, casts); integer and bool values are untouched. Its
// parameters are in the same order, with the same roles and domains. Inputs of the
// original function convert to it exactly.
ir::PrimFunc promote_floats_to_f64(const ir::PrimFunc& func);

}  // namespace dragon::harness
