// Whether an expression mentions a variable: the question block analysis, the cost model's
// index features and the implicit-GEMM presentation each ask of indices and bindings; and
// whether it loads a buffer (reducers and scans must not read what they update).
#pragma once

#include "dragon/ir/expr.h"

namespace dragon::ir {

bool uses_var(const Expr& e, const VarNode* var);
// Whether `e` loads `buffer` (any buffer when null).
bool loads_buffer(const Expr& e, const BufferNode* buffer);

}  // namespace dragon::ir
