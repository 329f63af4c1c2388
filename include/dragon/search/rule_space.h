// The design-space rules (design_space.h, postproc.h) as the sketch space evolutionary
// search draws from (sketch_space.h): the rule set's sketches of a function, and candidates
// replayed from them with their postprocessors, failures typed.
#pragma once

#include <cstdint>
#include <memory>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/search/rule_set.h"
#include "dragon/search/sketch_space.h"

namespace dragon::search {

// Throws UserError when the rules give `func` no sketch. `rules` must outlive the space.
std::unique_ptr<SketchSpace> make_rule_space(const ir::PrimFunc& func, const lower::Target& target,
                                             const RuleSet& rules, int64_t seed = 1);

}  // namespace dragon::search
