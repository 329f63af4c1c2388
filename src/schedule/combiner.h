// Internal: the associative combiners that reductions (rfactor) and scans (chunk_scan)
// may reorder, recognised in an update's value. Not a public API; schedule/ only.
#pragma once

#include <cstdint>
#include <optional>

#include "dragon/ir/expr.h"

namespace dragon::schedule::detail {

enum class Combiner : uint8_t { kAdd, kMul, kMax, kMin };

// `a op b`.
ir::Expr combine(Combiner combiner, ir::Expr a, ir::Expr b);
// The value e with `e op x == x` for every x of `type`: 0, 1, the lowest, the highest.
ir::Expr combiner_identity(Combiner combiner, ir::DataType type);

// `value` read as `a op b` for one of the combiners, or nullopt.
struct Combination {
  Combiner combiner;
  ir::Expr a;
  ir::Expr b;
};
std::optional<Combination> as_combination(const ir::Expr& value);

}  // namespace dragon::schedule::detail
