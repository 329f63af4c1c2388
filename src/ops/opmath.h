// Internal to the operator families: the small building helpers several of them need,
// written once here (not a public header).
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/ops/te.h"

namespace dragon::ops {

// The type an op computes and accumulates in: f32 for the 16-bit floats (torch's
// "opmath" type; sums, dot products, statistics and nonlinearities of f16/bf16 values
// are done in f32 and rounded once, at the end, as torch and FBGEMM do), else the element
// type itself.
inline DataType opmath_type(DataType t) { return t.bits() == 16 ? DataType::f32() : t; }

// A compute stage's index variables as expressions, to index a tensor with.
inline std::vector<Expr> to_exprs(const IndexVars& vars) { return {vars.begin(), vars.end()}; }

// The "axis" parameter of the ops that work along one axis; negative values count from
// the end like torch's dim (checked against the rank when the op is built).
inline OpParam axis_param(std::string help) {
  return int_param("axis", 1, std::move(help), std::numeric_limits<int64_t>::min());
}

}  // namespace dragon::ops
