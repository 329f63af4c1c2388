// The IR verifier: structural well-formedness of a PrimFunc (scoping of variables and
// buffers, block bindings and regions, types, names). Run after construction and after
// every transformation in debug and test builds (DRAGON_VERIFY_IR=1).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::ir {

// Every problem found, each a sentence naming the block, loop or buffer at fault; empty
// when the function is well formed.
std::vector<std::string> find_ir_problems(const PrimFunc& func);

// Throws InternalError listing the problems (for IR we built: a problem is our bug).
// `context` says who made the IR ("op matmul", "after split").
void check_well_formed(const PrimFunc& func, std::string_view context);

// Whether construction-time checks run: on in debug builds and when DRAGON_VERIFY_IR=1
// (the test suite sets it), off when DRAGON_VERIFY_IR=0.
bool ir_checks_enabled();

}  // namespace dragon::ir
