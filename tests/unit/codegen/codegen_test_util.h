// Shared helpers of the codegen tests: the default spec of every op kind, a private
// compile cache per test program, and the comparison of compiled code with the
// interpreter on the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::codegen::testing {

// "matmul:m=64,..." for every registered op kind (the op's defaults, `dragon ops`).
std::vector<std::string> default_op_specs();

// A cache under the build directory, so that tests neither read nor fill ~/.cache.
runtime::CompileCache& test_cache();

// Every non-input argument of `actual` equals `reference` within codegen_tolerance(dtype)
// times `tolerance_scale` of the reference's scale (interp::compare_tensors); the message
// names the output and its first differing elements.
::testing::AssertionResult outputs_match(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& reference,
                                         const std::vector<tensor::HostTensor>& actual, double tolerance_scale = 1);

// The tolerance for compiled code against the interpreter: float math functions of the
// C library (expf) may differ from the interpreter's double-then-round by an ulp or so,
// and that reaches outputs through reductions; f16/bf16 round after every operation in both.
double codegen_tolerance(ir::DataType dtype);

}  // namespace dragon::codegen::testing
