// Whether an expression mentions a variable: the question block analysis, the cost model's
// index features and the implicit-GEMM presentation each ask of indices and bindings.
#pragma once

#include "dragon/ir/expr.h"

namespace dragon::ir {

bool uses_var(const Expr& e, const VarNode* var);

}  // namespace dragon::ir
