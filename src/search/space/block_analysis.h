// Reading a scheduled function for the design-space rules: where a block sits (its loops,
// which iteration variables each loop feeds), its extents and its shape of computation.
// Read-only: rules change the IR only through the Schedule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::search {

// A block, its realization and the loops above it up to the enclosing block.
struct BlockSite {
  const ir::BlockRealizeNode* realize = nullptr;
  const ir::BlockNode* block = nullptr;
  std::vector<const ir::ForNode*> loops;  // outermost first
  const ir::BlockNode* parent = nullptr;  // the enclosing block (root for a top-level nest)
};

// The block named `name`, or nullopt.
std::optional<BlockSite> find_block(const ir::PrimFunc& func, std::string_view name);

// Every block but the root, in program order (a block before the blocks nested in it).
std::vector<std::string> block_names(const ir::PrimFunc& func);

// Which kinds of iteration variables a loop's variable feeds in the blocks under it.
struct LoopFeeds {
  bool spatial = false;
  bool reduce = false;
  bool other = false;  // ordered or opaque variables
  bool only_spatial() const { return spatial && !reduce && !other; }
  bool only_reduce() const { return reduce && !spatial && !other; }
};
LoopFeeds loop_feeds(const ir::ForNode* loop);
// The same for one block only: which of its iteration variables the loop (one of those
// above it) feeds through its realization's bindings. A loop above a block that feeds
// none of its variables repeats it (a block computed at another's loop).
LoopFeeds loop_feeds_block(const ir::ForNode* loop, const BlockSite& site);

bool is_thread_bound(const ir::ForNode* loop);                // any thread binding (blockIdx, threadIdx, vthread)
bool has_block_binding(const BlockSite& site);                // a loop above bound to blockIdx.*
bool has_thread_binding(const BlockSite& site);               // a loop above bound to threadIdx.*

bool is_reduction(const ir::BlockNode* block);                // reduce iteration variables and an init
bool is_spatial(const ir::BlockNode* block);                  // spatial iteration variables only, no init
bool has_ordered_vars(const ir::BlockNode* block);            // ordered or opaque variables (scans)
// A scan nothing has scheduled yet: one ordered variable, fed by the innermost loop alone
// (a reverse scan's binding runs it backwards); the other variables spatial, fed by the
// other loops; serial loops of constant extent, none bound to threads.
bool is_unscheduled_scan(const BlockSite& site);

// The largest element, in bytes, of the buffers `block` reads or writes (1 for none): what
// bounds a vector access of all of them.
int widest_element_bytes(const ir::BlockNode* block);
int64_t reduce_extent(const ir::BlockNode* block);            // product of the reduce domains' extents
int64_t spatial_extent(const ir::BlockNode* block);           // product of the spatial domains' extents

// Whether each loop above the block (in its scope) feeds exactly one iteration variable
// directly (the binding is the loop variable itself) and every variable is fed by one
// loop: the unscheduled form the tiling rules start from.
bool has_trivial_bindings(const BlockSite& site);

// Whether `read` (a read region of `block`) has reuse across the block's spatial
// iterations: its indices miss a spatial iteration variable of extent > 1, so several
// spatial points read each of its elements (GEMM's A misses j). A read indexed by every
// spatial variable is read once per reduce step and gains nothing from staging.
bool read_has_reuse(const ir::BlockNode* block, const ir::BufferRegion& read);

// A reduction with data reuse: one write, and some read (not of the output) with reuse
// (read_has_reuse; GEMM, convolution, attention scores): what multi-level tiling is for
// (MetaSchedule's NeedsMultiLevelTiling).
bool is_matmul_like(const ir::BlockNode* block);

// The stride (in elements) by which the row-major flattened address of `region`'s
// buffer moves when `var` grows by one, the other variables fixed; nullopt when the
// indices are not affine in it. 0 when the access does not use it.
std::optional<int64_t> access_stride(const ir::BufferRegion& region, const ir::Var& var);

// The linear coefficient of `var` in `e` (0 when `e` does not use it); nullopt when `e`
// is not affine in it (+, -, multiplication by constants, casts).
std::optional<int64_t> linear_coefficient(const ir::Expr& e, const ir::Var& var);

// The buffers a block reads, not counting its own output (a reduction's update).
std::vector<ir::BufferRegion> inputs_of(const ir::BlockNode* block);

}  // namespace dragon::search
