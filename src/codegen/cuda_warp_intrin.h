// Warp-level tensor-core blocks of the CUDA emitter: what a tensorized block (a unit loop
// annotated tensor_intrin = NAME over its scalar reference loops, lower.h) becomes, read
// off those loops. The table below is keyed by intrinsic name: cuda_mma.cc fills the
// mma.sync m16n8k16 family; a Hopper wgmma family would add its own rows (its operands
// are shared-memory descriptors and its fragments warpgroup-wide, so its planner and
// helper differ, not the dispatch). Private to codegen; printing is cuda_tensor_intrin.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dragon/ir/simplify.h"
#include "dragon/ir/stmt.h"

namespace dragon::codegen {

// The scalar loops under a tensorized block's unit loop: loop variables (outermost first,
// in the order of the intrinsic's description) with their extents, and the one store.
struct TileNest {
  std::vector<ir::Var> vars;
  std::vector<int64_t> extents;
  const ir::BufferStoreNode* store = nullptr;
};

// How a "warp"-scope buffer is stored per lane. The lowering sizes it as whole tiles
// (a logical row-major array of `row_stride` columns); tensor_intrin.h assigns each lane
// rows * cols / 32 elements of every rows x cols tile. Per lane, the buffer is declared
// as an array of num_elements / 32 elements holding tile after tile: the tile whose
// top-left logical element is at flat offset `base` (row = base / row_stride, a multiple
// of `rows`; col = base % row_stride, a multiple of `cols`) occupies the per-lane slots
// [tile * rows * cols / 32, +rows * cols / 32) with
//   tile = (base / (row_stride * rows)) * (row_stride / cols) + (base % row_stride) / cols,
// in the order of the PTX fragment registers (a0..a7, b0..b3, c0..c3). Every access to
// the buffer must be a tile of one tensorized block, all with the same rows, cols and
// row_stride.
struct FragmentLayout {
  int64_t row_stride = 0;
  int64_t rows = 0;
  int64_t cols = 0;
};

// One argument of a warp helper call: `buffer + offset` when buffer is set (a pointer into
// a memory buffer or into a lane's fragment array), else the integer `offset`.
struct WarpHelperArg {
  ir::Buffer buffer;
  ir::Expr offset;
};

// A tensorized block as one call of a prelude helper executed by all 32 lanes, which also
// receive the lane index as the last argument.
struct WarpCall {
  std::string helper;
  std::vector<WarpHelperArg> args;
  bool writes_memory = false;  // a store to shared/global (then a __syncwarp follows)
};

// What a planner may read and record: proofs use `analyzer` (the enclosing loops'
// ranges); fragment layouts are shared by all blocks of one kernel.
struct WarpPlanContext {
  const ir::Analyzer& analyzer;
  std::unordered_map<const ir::BufferNode*, FragmentLayout>& fragments;
};

// Plans one block; on a block it cannot express it returns nullopt and says why in `why`.
using WarpPlanner = std::optional<WarpCall> (*)(const TileNest& nest, WarpPlanContext& context, std::string& why);

// NAME -> planner, every intrinsic the CUDA emitter prints as warp-level code.
const std::map<std::string, WarpPlanner, std::less<>>& warp_intrin_planners();

// The nest under a unit loop, or nullopt when it is not a chain of constant loops from 0
// down to one store.
std::optional<TileNest> read_tile_nest(const ir::ForNode* unit);

// The prelude's warp helpers (inline PTX: ldmatrix, mma.sync, fill, store).
std::string_view mma_prelude();
// The prelude's cp.async helpers (cuda_async_copy.cc).
std::string_view async_copy_prelude();
// dragon_shared_address(p): the helpers' conversion of a generic pointer to a shared
// address, emitted once before either of the two preludes above.
std::string_view shared_address_prelude();

}  // namespace dragon::codegen
