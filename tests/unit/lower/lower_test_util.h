// Helpers for lowering tests: running a function at any lowering stage on the same host
// tensors (flattened parameters take the same bytes reshaped to {n}), comparing outputs
// bit for bit, and capturing every stage of the pipeline.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/lower.h"
#include "dragon/ops/op_registry.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::lower::testing {

// The function of an op spec ("matmul:m=16,n=16,k=16").
inline ir::PrimFunc workload(const char* spec) { return ops::OpRegistry::global().make_workload(spec).func; }

// `tensor`'s bytes with `shape` (same element count): how a caller hands a row-major
// tensor to a function whose parameter was flattened.
tensor::HostTensor reshaped(const tensor::HostTensor& tensor, const std::vector<int64_t>& shape);

// Runs `func` on copies of `args` (one per parameter, any shape with the right element
// count) and returns the arguments after the run, shaped like `args`.
std::vector<tensor::HostTensor> run_reshaped(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& args);

// Whether two runs' outputs (parameters that are not pure inputs of `func`) hold the same
// bytes; NaN payloads must match too. Names the first differing element.
::testing::AssertionResult same_bytes(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& expected,
                                      const std::vector<tensor::HostTensor>& actual);

// Runs `before` and `after` on the same random inputs (drawn for `before`) and compares
// their outputs bit for bit: lowering never reorders arithmetic.
::testing::AssertionResult computes_the_same(const ir::PrimFunc& before, const ir::PrimFunc& after,
                                             uint64_t seed = 5);

// The op at its default spec with every shape entry and integer parameter above
// `max_extent` capped to it (small enough for many interpreter runs); the default spec
// when the capped one breaks a constraint of the op.
ir::PrimFunc small_workload(const ops::OpKind& op, int64_t max_extent = 12);

struct Stage {
  std::string pass;
  ir::PrimFunc func;
  bool changed = false;
};
// lower() with an after_pass hook recording every stage, the input first (pass "input").
std::vector<Stage> lower_stages(const ir::PrimFunc& func, const Target& target, Lowered* result = nullptr);

// Loads of the buffer named `buffer` anywhere in a function's body.
int loads_of(const ir::PrimFunc& func, const std::string& buffer);

// Elements of the allocation of the buffer named `buffer` in a function's body (the product
// of its constant shape); 0 where none is allocated. Fails the test on a symbolic shape.
int64_t allocated_elements(const ir::PrimFunc& func, const std::string& buffer);

// Whether some line of `text`, trimmed, equals `line` exactly.
::testing::AssertionResult has_exact_line(const std::string& text, const std::string& line);

}  // namespace dragon::lower::testing
