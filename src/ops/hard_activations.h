// The piecewise-linear "hard" activations of MobileNetV3 (Howard et al. 2019), as torch
// computes them, written once for the elementwise ops (activation.cc) and the fused GEMM
// epilogues (fused.cc), so both build the same expression.
#pragma once

#include "dragon/ops/te.h"

namespace dragon::ops {

// relu6(x + 3) / 6, torch's hardsigmoid (equal to clamp(x / 6 + 1/2, 0, 1) up to rounding).
inline Expr hardsigmoid_of(const Expr& x) { return ir::min(ir::max(x + 3.0, 0.0), 6.0) / 6.0; }

// x * relu6(x + 3) / 6, torch's hardswish: the product is taken before the division, as
// torch's kernels do (so the rounding matches theirs).
inline Expr hardswish_of(const Expr& x) { return x * ir::min(ir::max(x + 3.0, 0.0), 6.0) / 6.0; }

}  // namespace dragon::ops
