// Warp-level tensor-core blocks of the CUDA emitter: what a tensorized block (a unit loop
// annotated tensor_intrin = NAME over its scalar reference loops, lower.h) becomes, read
// off those loops. The table below is keyed by intrinsic name: cuda_mma.cc fills the
// mma.sync m16n8k16 family, cuda_wgmma.cc the Hopper wgmma family (its operands are
// shared-memory descriptors and its fragments warpgroup-wide: 128 lanes). Private to
// codegen; printing is cuda_tensor_intrin.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
// (a logical row-major array of `row_stride` columns); tensor_intrin.h assigns each of
// the `lanes` lanes (32 for a warp, 128 for a warpgroup) rows * cols / lanes elements of
// every rows x cols tile. Per lane, the buffer is declared as an array of
// num_elements / lanes elements holding tile after tile: the tile whose top-left logical
// element is at flat offset `base` (row = base / row_stride, a multiple of `rows`;
// col = base % row_stride, a multiple of `cols`) occupies the per-lane slots
// [tile * rows * cols / lanes, +rows * cols / lanes) with
//   tile = (base / (row_stride * rows)) * (row_stride / cols) + (base % row_stride) / cols,
// in the order of the PTX fragment registers (a0..a7, b0..b3, c0..c3). Every access to
// the buffer must be a tile of one tensorized block, all with the same rows, cols and
// row_stride.
struct FragmentLayout {
  int64_t row_stride = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t lanes = 32;
};

// One argument of a warp helper call: `buffer + offset` when buffer is set (a pointer into
// a memory buffer or into a lane's fragment array), else the integer `offset`.
struct WarpHelperArg {
  ir::Buffer buffer;
  ir::Expr offset;
};

// A tensorized block as one call of a prelude helper executed by all `lanes` lanes (32:
// a warp; 128: a warpgroup), which also receive the lane index as the last argument.
struct WarpCall {
  std::string helper;
  std::vector<WarpHelperArg> args;
  bool writes_memory = false;  // a store to shared/global (then the lanes synchronize)
  int64_t lanes = 32;
};

// What a planner may read and record: proofs use `analyzer` (the enclosing loops'
// ranges); fragment layouts are shared by all blocks of one kernel, and so are the shared
// buffers stored with the 128-byte swizzle (tensor_intrin.h, the wgmma family).
struct WarpPlanContext {
  const ir::Analyzer& analyzer;
  std::unordered_map<const ir::BufferNode*, FragmentLayout>& fragments;
  std::unordered_set<const ir::BufferNode*>& swizzled;
};

// Plans one block; on a block it cannot express it returns nullopt and says why in `why`.
using WarpPlanner = std::function<std::optional<WarpCall>(const TileNest& nest, WarpPlanContext& context,
                                                          std::string& why)>;

// NAME -> planner, every intrinsic the CUDA emitter prints as warp-level code.
const std::map<std::string, WarpPlanner, std::less<>>& warp_intrin_planners();

// The nest under a unit loop, or nullopt when it is not a chain of constant loops from 0
// down to one store.
std::optional<TileNest> read_tile_nest(const ir::ForNode* unit);

// The wgmma family's rows of the table (cuda_wgmma.cc).
void add_wgmma_planners(std::map<std::string, WarpPlanner, std::less<>>& planners);

// ---- Tile accesses, shared by the planners (cuda_mma.cc) -----------------------------
// An index as base + sum(coefs[v] * vars[v]) over the tile's loop variables, with base
// free of them and constant coefficients.
struct Affine {
  ir::Expr base;
  std::vector<int64_t> coefs;
};
std::optional<Affine> decompose(const ir::Expr& index, const TileNest& nest, const ir::Analyzer& analyzer);
// A rows x cols tile of a "warp" fragment shared by `lanes` lanes: its per-lane slot
// (FragmentLayout's formula), recording the buffer's layout on first use; nullopt and
// `why` when the access is not such a tile or disagrees with the recorded layout.
std::optional<ir::Expr> fragment_slot(const ir::Buffer& buffer, const ir::Expr& index, const TileNest& nest,
                                      size_t row_var, size_t col_var, int64_t rows, int64_t cols, int64_t lanes,
                                      ir::DataType dtype, WarpPlanContext& context, std::string& why);
// A row-major tile of a shared or global buffer: its base offset and row stride; `align`
// > 0 requires base and stride to be multiples of `align` elements.
struct MemoryTile {
  ir::Expr base;
  int64_t row_stride = 0;
};
std::optional<MemoryTile> memory_tile(const ir::Buffer& buffer, const ir::Expr& index, const TileNest& nest,
                                      size_t row_var, size_t col_var, std::initializer_list<std::string_view> scopes,
                                      int64_t align, WarpPlanContext& context, std::string& why);
bool expect_extents(const TileNest& nest, std::vector<int64_t> extents, std::string& why);
// f32(load) -> the load, else nullptr.
const ir::BufferLoadNode* widened_load(const ir::Expr& e);
// The body of an MMA tile, C = C + f32(A) * f32(B) in either operand order, with A the
// operand indexed by the tile's row (loop 0); nullopt (and `why`) for another body. Shared
// by the mma.sync and wgmma planners.
struct MultiplyAccumulate {
  const ir::BufferLoadNode* a = nullptr;
  const ir::BufferLoadNode* b = nullptr;
};
std::optional<MultiplyAccumulate> match_multiply_accumulate(const TileNest& nest, WarpPlanContext& context,
                                                            std::string& why);
// "buffer[index]" for messages.
std::string describe_access(const ir::Buffer& buffer, const ir::Expr& index);

// The prelude's warp helpers (inline PTX: ldmatrix, mma.sync, fill, store).
std::string_view mma_prelude();
// The prelude's tf32 helpers (cuda_mma_tf32.cc), printed after mma_prelude() in sources
// that call one (is_tf32_helper), and the helper of the tf32 mma with `passes` 1 or 3.
std::string_view mma_tf32_prelude();
bool is_tf32_helper(std::string_view helper);
// The tf32 mma helper of `passes` 1 or 3; `mixed`: one operand 16-bit (its own helpers, in
// the prelude part mma_tf32_mixed_prelude(), which names the 16-bit types).
const char* tf32_mma_helper(int passes, bool mixed = false);
bool is_tf32_mixed_helper(std::string_view helper);
std::string_view mma_tf32_mixed_prelude();
// Rewrites the planned calls of one kernel so that a tf32 fragment that only fragment loads
// write and only one-pass mma read is rounded once, at its load (the "_rounded" loads),
// and the mma reading two such fragments does not round again ("_prerounded"); and a
// fragment only 3xTF32 mma read is split once, at its load, into its big and small parts
// ("_split" loads), which the mma reading two such fragments takes as they are
// ("_3x_presplit"). An mma prepares its operands only when both are, so an operand is
// prepared for every mma that reads it or for none. Returns the split fragments: each is
// declared twice as long, its small parts in its second half.
std::unordered_set<const ir::BufferNode*> prepare_tf32_fragments_once(
    std::unordered_map<const ir::ForNode*, WarpCall>& calls);
// The prelude's warpgroup helpers (cuda_wgmma.cc): the swizzle, descriptors, fill, store,
// the warpgroup barrier, and one wgmma helper per name in `helpers` that is one.
std::string wgmma_prelude(const std::set<std::string>& helpers);
// wgmma_prelude's two kinds of part: what every warpgroup kernel uses, and the helper
// `helper` when it is a wgmma one (empty otherwise).
std::string_view wgmma_common_prelude();
std::string wgmma_helper_prelude(const std::string& helper);
// The prelude's cp.async helpers (cuda_async_copy.cc).
std::string_view async_copy_prelude();
// dragon_shared_address(p): the helpers' conversion of a generic pointer to a shared
// address, emitted once before either of the two preludes above.
std::string_view shared_address_prelude();

}  // namespace dragon::codegen
