// DecisionSampler: fresh decisions for a sketch's perfect tiles and categoricals, drawn
// the way the schedule's own samplers draw them (each prime's exponent spread uniformly
// over the tile's slots, the innermost at most its bound; a categorical by its
// probabilities), and redrawn, a bounded number of times, until the thread counts they
// give fit what verify_gpu_code would accept: each loop bound to threadIdx at most the
// target's threads per block (a tensorized kernel's 32 lanes
// counted, 128 for wgmma's warpgroups), each loop bound to
// vthread at most its virtual threads, a tiled block's threads within its thread_extent
// bounds, the shared-memory copies computed at one of a tiled block's loops within
// the shared memory of a thread block, and a tiled block's register arrays (a local
// accumulator: its write below the loop it is written back at, times its virtual threads;
// mma fragments, "warp": a lane's share of a warp's tile of accumulator and operands)
// within a thread's registers less kRegisterOverhead, as verify_gpu_code counts them.
// What these loops fuse is read from the trace (which split slots and sampled values); a
// copy's footprint from the block's read
// indices, affine in the split pieces below the copy's loop (and in the thread pieces
// above it, which a shared copy covers too). Compute locations are left to the replay,
// which knows the IR. MetaSchedule rejects such draws after replaying them; rejecting
// before the replay saves the replay. Not a search strategy.
//
// Where none of the uniform draws fits, drawn tilings whose footprints are too big are
// shrunk instead: prime factors of the pieces below the copies move to the
// tile's outermost piece (a loop above them), pieces no thread count reads only. A split-K
// GEMM needs it: K = 524288 in chunks of 1024 puts the chunk axis inside the copies
// (1024 elements apart per chunk), and 0 of 12 uniform draws fitted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "dragon/ir/buffer_dim_align.h"
#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/random_engine.h"
#include "dragon/schedule/trace.h"

namespace dragon::search {

class DecisionSampler {
 public:
  // `func` is the unscheduled function the sketch applies to.
  DecisionSampler(const schedule::Trace& sketch, const ir::PrimFunc& func, const lower::Target& target);

  // Decisions by instruction index for every SamplePerfectTile and SampleCategorical of
  // the sketch (up to EnterPostproc). The last draw when none of `max_draws` fits.
  std::map<size_t, schedule::Arg> draw(schedule::RandomEngine& rng, int max_draws = 256) const;

  // How many constraints the sketch gives: products of bound loops, and shared-memory and
  // register budgets of tiled blocks (0: one draw is taken).
  size_t constraint_count() const { return constraints_.size() + footprint_budgets_.size(); }

 private:
  // One factor of a bound loop's extent: slot `slot` of tile `tile`, or the value of
  // categorical `categorical`, or a constant (both -1).
  struct Factor {
    int tile = -1;
    int slot = -1;
    int categorical = -1;
    int64_t constant = 1;
  };
  struct Tile {
    size_t instruction = 0;
    int n = 1;
    int64_t max_innermost = -1;
    int64_t extent = 1;
  };
  struct Categorical {
    size_t instruction = 0;
    std::vector<int64_t> candidates;
    std::vector<double> probs;
  };
  // low <= lanes * product(factors) <= high
  struct Constraint {
    std::vector<Factor> factors;
    int64_t lanes = 1;
    int64_t low = 1, high = 0;
  };
  using Product = std::vector<Factor>;
  // One buffer dimension of a shared copy: 1 + sum of coef * (extent - 1) * stride over
  // the split pieces the copy covers.
  struct Term {
    int64_t coef = 0;
    Product extent, stride;
  };
  struct Copy {
    int64_t bytes = 0;  // per element
    std::vector<std::vector<Term>> dims;
    int64_t lanes = 1;  // a register fragment shared by a warp's (32) or warpgroup's (128) lanes
    // A shared copy's rows padded by storage_align (its entry, buffer named ""), allocated
    // as flatten_buffers allocates them (ir::aligned_strides).
    std::vector<ir::BufferDimAlign> aligns;
    // The copies of a software-pipelined loop: one buffer per stage (the sampled depth).
    std::optional<Factor> stages;
    // A staged output tile, live only once the operand copies are dead: lowering's
    // share_shared_memory gives it the memory of the largest of them of its element size,
    // so it adds only what it exceeds that one by.
    bool after_the_others = false;
  };
  // The shared copies of one tiled block (limit: a block's shared memory), or the local
  // accumulator a thread of it holds (limit: its registers less the overhead): their bytes
  // at most `limit`.
  struct FootprintBudget {
    std::vector<Copy> copies;
    int64_t limit = 0;
  };
  struct Draw {
    std::vector<std::vector<int64_t>> tiles;
    std::vector<int64_t> categories;  // chosen index per categorical
  };

  bool fits(const Draw& draw) const;
  int64_t footprint_bytes(const FootprintBudget& budget, const Draw& draw) const;
  // Moves prime factors of the tile pieces a footprint spans to their tile's outermost
  // piece until every budget holds; false when no movable piece is left first.
  bool shrink_footprints(Draw& draw) const;
  int64_t value(const Factor& f, const Draw& draw) const;
  int64_t value(const Product& p, const Draw& draw) const;
  void add_footprint_budgets(const schedule::Trace& sketch, size_t end, const ir::PrimFunc& func,
                          const std::map<int64_t, Factor>& factor_of_value,
                          const std::map<int64_t, int64_t>& tensorized, const lower::Target& target);

  std::vector<Tile> tiles_;
  std::vector<Categorical> categoricals_;
  std::vector<Constraint> constraints_;
  std::vector<FootprintBudget> footprint_budgets_;
  std::set<std::pair<int, int>> counted_pieces_;  // (tile, slot) pieces a constraint reads
};

}  // namespace dragon::search
