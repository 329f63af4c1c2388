// Questions mutators ask of a trace: which sampling instructions (before postprocessing,
// with a decision) play a role (the design space's sampling_sites), what a decision holds,
// another draw of a categorical. Internal to src/search/mutator; no IR is touched.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/schedule/random_engine.h"
#include "dragon/schedule/trace.h"
#include "dragon/search/design_space.h"

namespace dragon::search::mutator_detail {

// Indices of the sampling instructions of `trace` (before EnterPostproc) whose role is one
// of `roles` and that have a decision: the ones a mutator may change (with_decision drops
// everything after the marker).
std::vector<size_t> decided_sites(const schedule::Trace& trace, std::initializer_list<SamplingRole> roles);

// The integer list of a decision (SamplePerfectTile), or nullopt for another shape.
std::optional<std::vector<int64_t>> int_list_decision(const schedule::Arg& decision);

// For a SampleCategorical at `index` with decision d: another index drawn by the
// candidates' probabilities with d left out; nullopt when no other has weight.
std::optional<int64_t> redraw_categorical(const schedule::Trace& trace, size_t index, schedule::RandomEngine& rng);

// An element of `items` chosen uniformly.
template <typename T>
const T& pick(const std::vector<T>& items, schedule::RandomEngine& rng) {
  return items[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(items.size())))];
}

}  // namespace dragon::search::mutator_detail
