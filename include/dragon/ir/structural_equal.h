// Structural equality of IR up to renaming (alpha-equivalence): variables and buffers
// match by their definition position, never by name. Not pointer identity (same_as).
#pragma once

#include "dragon/ir/function.h"

namespace dragon::ir {

// Parameters match in order, and loop variables, block iteration variables, block
// allocations and Allocate buffers where they are defined; names never matter. Every
// other field (types, shapes, scopes, block and function names, annotations, loop kinds,
// thread tags, value domains, parameter roles, constants) must be equal. NaN equals NaN;
// 0.0 and -0.0 differ.
bool structural_equal(const PrimFunc& a, const PrimFunc& b);
// Free variables and buffers (not defined inside) compare by identity.
bool structural_equal(const Stmt& a, const Stmt& b);
bool structural_equal(const Expr& a, const Expr& b);

}  // namespace dragon::ir
