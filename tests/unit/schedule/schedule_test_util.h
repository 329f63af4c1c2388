// Shared helpers for schedule tests: workloads, running a function before and after
// scheduling on the same random inputs, and looking for lines in printed IR.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"

namespace dragon::schedule::testing {

ir::PrimFunc workload(std::string_view spec);

// Runs `before` and `after` (same parameters) on the same inputs drawn with `seed` and
// compares every output: byte for byte when `exact`, else within a relative tolerance
// scaled by the largest magnitude of the reference output (reassociated reductions).
::testing::AssertionResult same_outputs(const ir::PrimFunc& before, const ir::PrimFunc& after, uint64_t seed = 7,
                                        bool exact = true);

// Whether some line of `text` contains `piece` (after trimming indentation).
::testing::AssertionResult has_line(const std::string& text, std::string_view piece);

// Replays the schedule's trace on its original function and checks the result is
// structurally equal to the scheduled function; the JSON round trip too.
::testing::AssertionResult replays_exactly(const Schedule& sch);

}  // namespace dragon::schedule::testing
