// Constant folding of operators and intrinsics on immediates, with the exact semantics of
// the operand type. Returns nullopt when an operand is not an immediate or when folding
// would need a value the type cannot hold (integer overflow, division by zero).
#pragma once

#include <optional>
#include <vector>

#include "dragon/ir/expr.h"

namespace dragon::ir::simplify_detail {

std::optional<Expr> fold_binary(NodeKind kind, const Expr& a, const Expr& b);
std::optional<Expr> fold_not(const Expr& a);
std::optional<Expr> fold_cast(DataType type, const Expr& value);
std::optional<Expr> fold_call(Intrinsic op, const std::vector<Expr>& args);

}  // namespace dragon::ir::simplify_detail
