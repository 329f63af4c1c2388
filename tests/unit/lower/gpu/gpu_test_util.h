// Helpers for the GPU lowering tests: the stages of lower() for the H200, and counting
// barriers and loops in lowered IR.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "dragon/ir/function.h"
#include "dragon/lower/lower.h"

namespace dragon::lower::testing {

// The function after the first run of pipeline pass `pass` when lowering for the H200.
ir::PrimFunc gpu_stage(const ir::PrimFunc& func, const std::string& pass);

// Runs `before` and `after` (any lowering stages of one function: flattened parameters
// take the same bytes) on the same random inputs and compares every output within a
// tolerance scaled by the largest magnitude of `before`'s output (cross-thread
// reductions reassociate). NaN must match NaN.
::testing::AssertionResult close_outputs(const ir::PrimFunc& before, const ir::PrimFunc& after, uint64_t seed = 5);

// How many Evaluate(sync_threads()) statements `stmt` holds.
int count_syncs(const ir::Stmt& stmt);

// The body's text without the function line: what the golden tests compare.
std::string body_text(const ir::PrimFunc& func);

}  // namespace dragon::lower::testing
