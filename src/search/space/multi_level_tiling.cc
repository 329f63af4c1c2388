// MultiLevelTiling (multi_level_tiling.h): the rule for blocks with data reuse (GEMM,
// convolution, attention scores) and the tiling steps its tensor-core variant shares.
// GPU: SSSRRSRS, the first three spatial levels fused and bound to blockIdx.x, vthread.x
// and threadIdx.x, the inputs copied to shared memory at the first reduce level by the
// whole thread block (cooperative fetch), the outputs accumulated in registers (local)
// per thread. CPU: SSRSRS with an optional global write cache.
#include "space/multi_level_tiling.h"

#include <algorithm>
#include <map>

#include "dragon/ir/op.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/support/error.h"
#include "space/block_analysis.h"
#include "space/rule.h"

namespace dragon::search {

using schedule::BlockRV;
using schedule::ExprRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::ScheduleError;
using schedule::SplitFactor;

namespace {

ReuseRequirement parse_requirement(const std::string& text, const std::string& param) {
  if (text == "none") return ReuseRequirement::kNone;
  if (text == "may") return ReuseRequirement::kMay;
  if (text == "must") return ReuseRequirement::kMust;
  throw UserError("rule multi_level_tiling: " + param + " must be none, may or must, not '" + text + "'");
}

ReuseConfig read_reuse(ParamReader& params, const std::string& prefix, const ReuseConfig& fallback) {
  auto requirement_name = [](ReuseRequirement r) {
    return r == ReuseRequirement::kMust ? "must" : r == ReuseRequirement::kMay ? "may" : "none";
  };
  ReuseConfig config;
  config.requirement = parse_requirement(params.get_string(prefix, requirement_name(fallback.requirement)), prefix);
  std::vector<int64_t> fallback_levels(fallback.levels.begin(), fallback.levels.end());
  for (int64_t level : params.get_ints(prefix + "_levels", fallback_levels)) config.levels.push_back(static_cast<int>(level));
  config.scope = params.get_string(prefix + "_scope", fallback.scope);
  return config;
}

int64_t product_of_spatial_extents(const ir::BlockNode* block) { return spatial_extent(block); }

}  // namespace

MultiLevelTilingOptions read_multi_level_tiling_options(ParamReader& params, const lower::Target& target) {
  MultiLevelTilingOptions o;
  bool gpu = target.is_gpu();
  o.structure = params.get_string("structure", gpu ? "SSSRRSRS" : "SSRSRS");
  o.tile_binds = params.get_strings(
      "tile_binds", gpu ? std::vector<std::string>{"blockIdx.x", "vthread.x", "threadIdx.x"} : std::vector<std::string>{});
  o.max_innermost_factor = params.get_int("max_innermost_factor", 64);
  o.vector_load_lens = params.get_ints("vector_load_lens", gpu ? std::vector<int64_t>{1, 2, 4, 8, 16} : std::vector<int64_t>{});
  o.reuse_read = read_reuse(params, "reuse_read",
                            gpu ? ReuseConfig{ReuseRequirement::kMust, {4}, "shared"} : ReuseConfig{ReuseRequirement::kNone, {}, ""});
  o.reuse_write = read_reuse(params, "reuse_write",
                             gpu ? ReuseConfig{ReuseRequirement::kMust, {3}, "local"}
                                 : ReuseConfig{ReuseRequirement::kMay, {1, 2}, "global"});
  o.warp_size = target.warp_size > 0 ? target.warp_size : 32;
  o.max_threads_per_block = target.max_threads_per_block > 0 ? target.max_threads_per_block : 1024;
  o.max_vector_bytes = target.max_vector_bytes > 0 ? target.max_vector_bytes : 16;
  for (char c : o.structure) {
    if (c != 'S' && c != 'R') throw UserError("rule multi_level_tiling: structure '" + o.structure + "' must be S and R letters");
  }
  if (o.structure.find('S') == std::string::npos || o.structure.find('R') == std::string::npos) {
    throw UserError("rule multi_level_tiling: structure '" + o.structure + "' needs at least one S and one R level");
  }
  if (o.tile_binds.size() > o.structure.size()) throw UserError("rule multi_level_tiling: more tile_binds than levels");
  for (size_t i = 0; i < o.tile_binds.size(); ++i) {
    if (o.structure[i] != 'S') throw UserError("rule multi_level_tiling: tile_binds must bind spatial (S) levels only");
  }
  for (const ReuseConfig* r : {&o.reuse_read, &o.reuse_write}) {
    for (int level : r->levels) {
      if (level < 1 || level > static_cast<int>(o.structure.size())) {
        throw UserError("rule multi_level_tiling: reuse level " + std::to_string(level) + " is not a level of " + o.structure);
      }
    }
  }
  return o;
}

TiledLoops tile_block(Schedule& sch, BlockRV block, const MultiLevelTilingOptions& options) {
  sch.annotate(block, "meta_schedule.tiling_structure", options.structure);
  std::vector<LoopRV> loops = sch.get_loops(block);
  int spatial_levels = static_cast<int>(std::count(options.structure.begin(), options.structure.end(), 'S'));
  int reduce_levels = static_cast<int>(options.structure.size()) - spatial_levels;
  // pieces[kind][loop][k]: the k-th tile of a spatial (0) or reduce (1) loop.
  std::vector<std::vector<LoopRV>> pieces[2];
  for (LoopRV loop : loops) {
    bool reduce = loop_feeds(sch.get(loop)).reduce;
    int n = std::max(1, reduce ? reduce_levels : spatial_levels);
    std::vector<ExprRV> factors = sch.sample_perfect_tile(loop, n, static_cast<int>(options.max_innermost_factor));
    std::vector<SplitFactor> split_factors(factors.begin(), factors.end());
    pieces[reduce ? 1 : 0].push_back(sch.split(loop, split_factors));
  }
  TiledLoops tiled;
  std::vector<LoopRV> order;
  int seen[2] = {0, 0};
  for (char c : options.structure) {
    int kind = c == 'S' ? 0 : 1;
    std::vector<LoopRV> level;
    for (const std::vector<LoopRV>& tiles : pieces[kind]) level.push_back(tiles[seen[kind]]);
    ++seen[kind];
    order.insert(order.end(), level.begin(), level.end());
    tiled.levels.push_back(std::move(level));
  }
  sch.reorder(order);
  for (size_t i = 0; i < options.tile_binds.size(); ++i) {
    std::vector<LoopRV>& level = tiled.levels[i];
    if (level.empty()) continue;
    LoopRV fused = level.size() == 1 ? level[0] : sch.fuse(level);
    sch.bind(fused, options.tile_binds[i]);
    level = {fused};
  }
  bool binds_threads = std::any_of(options.tile_binds.begin(), options.tile_binds.end(),
                                   [](const std::string& t) { return t.rfind("threadIdx.", 0) == 0; });
  if (binds_threads) {
    int64_t low = product_of_spatial_extents(sch.get(block)) > 2 * options.warp_size ? options.warp_size : 1;
    sch.annotate(block, "meta_schedule.thread_extent_low_inclusive", low);
    sch.annotate(block, "meta_schedule.thread_extent_high_inclusive", options.max_threads_per_block);
  }
  return tiled;
}

void annotate_cooperative_fetch(Schedule& sch, BlockRV copy, int dtype_bytes, const MultiLevelTilingOptions& options) {
  std::vector<int64_t> lens;
  for (int64_t len : options.vector_load_lens) {
    if (len >= 1 && len * dtype_bytes <= options.max_vector_bytes) lens.push_back(len);
  }
  if (lens.empty()) lens.push_back(1);
  ExprRV vector = sch.sample_categorical(lens, std::vector<double>(lens.size(), 1.0 / lens.size()));
  sch.annotate(copy, "meta_schedule.cooperative_fetch", vector);
}

std::vector<Schedule> add_reuse(const Schedule& tiled, BlockRV block, const TiledLoops& loops,
                                const MultiLevelTilingOptions& options) {
  auto last_loop_of_level = [&](int level) { return loops.levels.at(level - 1).back(); };
  // Write-cache choices: -1 for none, else the level.
  std::vector<int> write_choices;
  if (options.reuse_write.requirement != ReuseRequirement::kMust) write_choices.push_back(-1);
  if (options.reuse_write.requirement != ReuseRequirement::kNone) {
    for (int level : options.reuse_write.levels) write_choices.push_back(level);
  }
  std::vector<Schedule> out;
  for (int write_level : write_choices) {
    Schedule s = tiled.copy();
    try {
      if (write_level > 0 && !loops.levels.at(write_level - 1).empty()) {
        BlockRV write_cache = s.cache_write(block, 0, options.reuse_write.scope);
        s.reverse_compute_at(write_cache, last_loop_of_level(write_level), /*preserve_unit_loops=*/true);
      }
      if (options.reuse_read.requirement == ReuseRequirement::kMust && !options.reuse_read.levels.empty() &&
          !loops.levels.at(options.reuse_read.levels.front() - 1).empty()) {
        int read_level = options.reuse_read.levels.front();
        const ir::BlockNode* b = s.get(block);
        size_t n_reads = b->reads.size();
        for (size_t i = 0; i < n_reads; ++i) {
          const ir::BlockNode* current = s.get(block);
          const ir::Buffer& buffer = current->reads[i].buffer;
          bool written = false;
          for (const ir::BufferRegion& w : current->writes) written = written || w.buffer.same_as(buffer);
          // Only reads with reuse are staged: one indexed by every spatial variable (group
          // norm's X in its rfactor block) is read once, and its tile would only cost
          // shared memory and a copy.
          if (written || buffer->scope != "global" || !read_has_reuse(current, current->reads[i])) continue;
          int ndim = buffer.ndim();
          int bytes = buffer->dtype.bytes();
          BlockRV copy = s.cache_read(block, static_cast<int64_t>(i), options.reuse_read.scope, {block});
          s.compute_at(copy, last_loop_of_level(read_level), /*preserve_unit_loops=*/true);
          std::vector<LoopRV> copy_loops = s.get_loops(copy);
          if (ndim == 0 || static_cast<int>(copy_loops.size()) < ndim) continue;
          std::vector<LoopRV> own(copy_loops.end() - ndim, copy_loops.end());
          if (own.size() > 1) s.fuse(own);
          if (options.reuse_read.scope.rfind("shared", 0) == 0) annotate_cooperative_fetch(s, copy, bytes, options);
        }
      }
    } catch (const ScheduleError&) {
      continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

class MultiLevelTiling : public ScheduleRule {
 public:
  explicit MultiLevelTiling(MultiLevelTilingOptions options) : options_(std::move(options)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    if (!site || !is_matmul_like(site->block) || !has_trivial_bindings(*site)) return {};
    if (site->block->annotations.count("meta_schedule.tiling_structure") != 0) return {};
    for (const ir::ForNode* l : site->loops) {
      if (l->for_kind != ir::ForKind::kSerial || !l->annotations.empty()) return {};
    }
    Schedule tiled = sch.copy();
    TiledLoops loops;
    BlockRV b;
    try {
      b = tiled.get_block(block);
      loops = tile_block(tiled, b, options_);
    } catch (const ScheduleError&) {
      return {};
    }
    return add_reuse(tiled, b, loops, options_);
  }

 private:
  MultiLevelTilingOptions options_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_multi_level_tiling_rule(ParamReader& params, const lower::Target& target) {
  return std::make_unique<MultiLevelTiling>(read_multi_level_tiling_options(params, target));
}

}  // namespace dragon::search
