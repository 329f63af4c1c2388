// The associative combiners that reductions and scans may reorder (rfactor, chunk_scan,
// the cross-thread reduction lowering), recognised in an update's value.
#pragma once

#include <cstdint>
#include <optional>

#include "dragon/ir/expr.h"

namespace dragon::ir {

enum class Combiner : uint8_t { kAdd, kMul, kMax, kMin };

// `a op b`.
Expr combine(Combiner combiner, Expr a, Expr b);
// The value e with `e op x == x` for every x of `type`: 0, 1, the lowest, the highest.
Expr combiner_identity(Combiner combiner, DataType type);

// `value` read as `a op b` for one of the combiners, or nullopt.
struct Combination {
  Combiner combiner;
  Expr a;
  Expr b;
};
std::optional<Combination> as_combination(const Expr& value);

}  // namespace dragon::ir
