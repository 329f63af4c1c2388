// A condition as the list of its && operands and back: the form guards and predicates
// are split in when some of their conjuncts move (predicates of a chunked scan, guards
// hoisted out of loops, guards a carried value may live under).
#pragma once

#include <vector>

#include "dragon/ir/expr.h"

namespace dragon::ir {

// The && operands of `condition`, nested ones flattened; itself alone when it is no
// conjunction.
std::vector<Expr> split_conjuncts(const Expr& condition);
// The conjunction of `conditions` in order; true when there are none.
Expr conjunction(const std::vector<Expr>& conditions);

}  // namespace dragon::ir
