// What the `dragon tune` CPU tests check after a run: the best record of a
// database, replayed, and its time measured again against the default schedule
// by the CPU measurer (the harness's checks first, then its timer), in
// alternating rounds.
#pragma once

#include <optional>
#include <string>

#include "dragon/db/database.h"
#include "dragon/ir/function.h"
#include "dragon/ops/op_registry.h"

namespace dragon::search::testing {

struct Gain {
  double default_ms = 0, tuned_ms = 0;
};

// The scheduled function of the best record of `database`'s only tuning key, or
// nullopt (with a test failure) when there is no key, several, or no best
// record with a script.
std::optional<ir::PrimFunc> best_tuned(const db::Database &database,
                                       const ops::Workload &workload);

// The unscheduled function (the CPU's default schedule) and `tuned` timed in
// `rounds` alternating rounds (each goes first in turn, so a change in the
// machine's load hits both); each figure is the median over rounds of each
// round's median. A candidate that fails its checks is a test failure, and
// gives zeros.
Gain remeasure_against_default(const ops::Workload &workload,
                               const ir::PrimFunc &tuned, int rounds = 3);

} // namespace dragon::search::testing
