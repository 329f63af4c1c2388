// Internal: blockize's plan and the function it builds from it, for blockize itself and
// for tensorize's plan, which matches a loop's blockized function without committing it
// (no schedule copy, no new BlockTree: tensorize's check asks this for many loops). Not
// the preconditions (Schedule::plan_blockize, blockize.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::schedule::detail {

// A binding split into the tile index (outer loops only) and the offset in the tile
// (inner loops only): binding == outer * extent + inner, 0 <= inner < extent.
struct Division {
  ir::Expr outer;
  ir::Expr inner;
  int64_t extent = 1;
};

// What blockize's construction needs: the chain of loops from the given one down to the
// block, each binding divided into tiles, and the predicate's conjuncts split between
// the loops above and those below.
struct BlockizePlan {
  std::vector<const ir::ForNode*> inner_loops;
  const ir::BlockRealizeNode* realize = nullptr;
  std::vector<Division> divisions;
  ir::Expr outer_pred, inner_pred;
};

// `func` blockized by `plan` (its loop replaced by the new outer block's realization),
// and the outer block's name.
struct Blockized {
  ir::PrimFunc func;
  std::string outer_name;
};
Blockized build_blockized(const ir::PrimFunc& func, const BlockizePlan& plan, bool preserve_unit_iters);

}  // namespace dragon::schedule::detail
