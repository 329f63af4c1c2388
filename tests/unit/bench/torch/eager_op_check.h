// Checks an eager (ATen) baseline against our interpreter on the same inputs: the op kind's
// PrimFunc at a small shape runs on the interpreter, the table's entry runs on CPU tensors
// viewing the same bytes, and every output must agree to the type's reordering tolerance.
#pragma once

#include <cstdint>
#include <string_view>

#include "dragon/interp/input_generator.h"

namespace dragon::bench::testing {

struct EagerCheckOptions {
  uint64_t seed = 1;
  interp::Distribution distribution = interp::Distribution::kNormal;
  // Multiplies interp::reordering_tolerance(dtype); torch's kernels use other algorithms
  // (erf, exp, pairwise sums), so a small factor is expected; say why when raising it.
  double tolerance_factor = 4;
  // Also run with every float input promoted to f64 and compare against the interpreter
  // in the op's own type at the same tolerance (the reference twin must agree too).
  bool check_f64_twin = true;
};

// Adds a GoogleTest failure naming the spec, the output and the first mismatches.
void expect_eager_matches_interpreter(std::string_view spec, const EagerCheckOptions& options = {});

}  // namespace dragon::bench::testing
