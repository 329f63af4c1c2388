// The canonical IR text printer: one deterministic, compact spelling of every function,
// statement and expression (the language model's prompt). Not a code generator; the
// grammar is specified in docs/ir-text.md and read back by parser.h.
#pragma once

#include <string>

#include "dragon/ir/function.h"

namespace dragon::ir {

// The whole function, ending in a newline. Names are made unambiguous where they are
// used (suffixes _1, _2, ...), so parse_function(print_function(f)) binds exactly as f.
std::string print_function(const PrimFunc& func);
// A statement at indentation zero, ending in a newline.
std::string print_stmt(const Stmt& stmt);
// An expression on one line; free variables print under their own names.
std::string print_expr(const Expr& expr);

}  // namespace dragon::ir
