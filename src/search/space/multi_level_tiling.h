// Multi-level tiling (MetaSchedule's MultiLevelTiling), shared by the plain rule and its
// tensor-core variant: the loops of a block are split by sampled perfect tiles into the
// levels of a structure string ("SSSRRSRS" on the GPU, "SSRSRS" on the CPU), reordered
// level by level, the first levels fused and bound to thread axes, and reads and the
// write cached at chosen levels. Internal to src/search/space.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"
#include "param_reader.h"

namespace dragon::search {

// Whether a level of caching must happen, may happen (a fork with and without), or not.
enum class ReuseRequirement { kNone, kMay, kMust };

struct ReuseConfig {
  ReuseRequirement requirement = ReuseRequirement::kNone;
  std::vector<int> levels;  // 1-based levels of the structure (each a fork when several)
  std::string scope;
};

struct MultiLevelTilingOptions {
  std::string structure;
  std::vector<std::string> tile_binds;  // thread axes of the first levels, in order
  int64_t max_innermost_factor = 64;
  std::vector<int64_t> vector_load_lens;  // cooperative fetch vector lengths (elements)
  ReuseConfig reuse_read;
  ReuseConfig reuse_write;
  int64_t warp_size = 32;
  int64_t max_threads_per_block = 1024;
  int64_t max_vector_bytes = 16;
};

// Reads the options with the target's defaults (GPU: SSSRRSRS bound to blockIdx.x,
// vthread.x, threadIdx.x, shared reads at level 4, a local write cache at level 3; CPU:
// SSRSRS, a global write cache that may sit at level 1 or 2).
MultiLevelTilingOptions read_multi_level_tiling_options(ParamReader& params, const lower::Target& target);

// The loops of each level after tiling, outermost level first; a bound level is its one
// fused loop.
struct TiledLoops {
  std::vector<std::vector<schedule::LoopRV>> levels;
};

// Splits, reorders and binds the loops of `block` (which must have trivial bindings and
// serial loops) as `options` says, annotating the structure. Throws ScheduleError when a
// primitive refuses.
TiledLoops tile_block(schedule::Schedule& sch, schedule::BlockRV block, const MultiLevelTilingOptions& options);

// The caching forks of a tiled block: for each write-cache choice (none, or a level), the
// write cached at that level's last loop, then every read cached at the read level with a
// sampled cooperative-fetch vector length. Schedules whose primitives refuse are dropped.
std::vector<schedule::Schedule> add_reuse(const schedule::Schedule& tiled, schedule::BlockRV block,
                                          const TiledLoops& loops, const MultiLevelTilingOptions& options);

// The cooperative-fetch annotation of a shared copy: the vector lengths whose bytes fit
// the target, sampled uniformly.
void annotate_cooperative_fetch(schedule::Schedule& sch, schedule::BlockRV copy, int dtype_bytes,
                                const MultiLevelTilingOptions& options);

}  // namespace dragon::search
