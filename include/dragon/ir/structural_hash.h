// A structural hash that agrees with structural_equal: equal IR hashes equal. Stable
// across runs, builds and machines (no pointers, no std::hash), so it serves as the
// workload key.
#pragma once

#include <cstdint>

#include "dragon/ir/function.h"

namespace dragon::ir {

uint64_t structural_hash(const PrimFunc& func);
// Free variables and buffers hash by their name and type (identity implies both).
uint64_t structural_hash(const Stmt& stmt);
uint64_t structural_hash(const Expr& expr);

}  // namespace dragon::ir
