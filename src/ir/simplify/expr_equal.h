// Deep equality of expressions for the simplifier: same shape, same immediates, same
// variable and buffer nodes. Not the structural equality of ir/ (which maps variables).
#pragma once

#include "dragon/ir/expr.h"

namespace dragon::ir::simplify_detail {

bool deep_equal(const Expr& a, const Expr& b);

}  // namespace dragon::ir::simplify_detail
