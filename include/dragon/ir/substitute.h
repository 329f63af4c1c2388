// Variable substitution: an expression or statement with every use of some variables
// replaced by expressions. Declarations (loop variables, block iteration variables) are
// kept as they are, and nothing is renamed to avoid capture: the caller's map decides.
#pragma once

#include <unordered_map>

#include "dragon/ir/expr.h"
#include "dragon/ir/stmt.h"

namespace dragon::ir {

using VarMap = std::unordered_map<const VarNode*, Expr>;

// `e` with each variable of `map` replaced by its expression. The very same node when no
// variable of `map` occurs (or `e` is undefined).
Expr substitute(const Expr& e, const VarMap& map);
// The same everywhere in `s`: bounds, bindings, predicates, regions, indices and values.
Stmt substitute(const Stmt& s, const VarMap& map);

}  // namespace dragon::ir
