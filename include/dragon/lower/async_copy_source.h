// What an asynchronous copy (cp.async on sm_80+) can issue: a store into shared memory whose
// value is a load of global memory of the same type, shared[i] = global[j], or such a load
// behind selects whose other value is zero, shared[i] = select(c, global[j], 0), as a padded
// gather (an implicit GEMM's input, a tile padded to whole mma tiles) writes it: cp.async
// zero-fills where c is false (a source size of 0 bytes reads nothing). Shared by
// inject_software_pipeline, which admits only such statements to async stages, and the CUDA
// code generator, which issues them.
#pragma once

#include <optional>
#include <string>

#include "dragon/ir/expr.h"
#include "dragon/ir/stmt.h"

namespace dragon::lower {

struct AsyncCopySource {
  const ir::BufferLoadNode* load = nullptr;  // of global memory
  ir::Expr guard;                            // the selects' conditions, and-ed; undefined when none
};

// The copy `store` is, or nullopt with `why` (when given) saying what it is instead.
std::optional<AsyncCopySource> async_copy_source(const ir::BufferStoreNode* store, std::string* why = nullptr);

// `value` with its selects peeled while their false side is a zero: the load under them
// (null when what is left is not a load) and their conditions. What async_copy_source
// reads a store's value as, and what the search asks of an operand's producer before it
// pipelines the operand's fetch.
AsyncCopySource peel_zero_selects(const ir::Expr& value);

}  // namespace dragon::lower
