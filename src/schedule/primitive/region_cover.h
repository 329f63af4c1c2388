// Internal: the region analysis of compute_at and reverse_compute_at. Symbolic bounds of
// index expressions with some loop variables relaxed over their ranges; affine indices
// with floordiv/floormod by constants only (anything else is reported, never guessed).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dragon/ir/simplify.h"
#include "dragon/ir/stmt.h"

namespace dragon::schedule::detail {

// Inclusive bounds [lo, hi].
using Interval = std::pair<ir::Expr, ir::Expr>;
using RelaxMap = std::unordered_map<const ir::VarNode*, Interval>;

// Symbolic bounds of `e` over the variables of `relaxed`, each taking values in its own
// interval; other variables stay as they are. nullopt outside the affine-with-floordiv
// fragment (products of two relaxed terms, divisions by variables, loads, calls).
std::optional<Interval> relax(const ir::Expr& e, const RelaxMap& relaxed);

enum class Access { kRead, kWrite };

// The region of `buffer` that the blocks realized under `loop` (not nested in another
// block) read or write during one of its iterations: per dimension, inclusive bounds in
// terms of the loops above and including `loop`, which `analyzer` knows. nullopt, with
// `why` set, when an index is data-dependent or not affine in the loops below.
std::optional<std::vector<Interval>> accessed_region(const ir::ForNode* loop, const ir::BufferNode* buffer,
                                                     Access access, const ir::Analyzer& analyzer, std::string& why);

// Constant extents covering each dimension of `region` (a bound where the extent is not
// constant); nullopt, with `why` set, when one is unbounded.
std::optional<std::vector<ir::Expr>> covering_extents(const std::vector<Interval>& region,
                                                      const ir::Analyzer& analyzer, std::string& why);

}  // namespace dragon::schedule::detail
