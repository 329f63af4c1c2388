// The random schedule generator of random_trace.h: each step picks a random top-level
// block and a random primitive (or GPU recipe) for it; refused primitives are skipped
// after checking they left the schedule as it was, steps over the work budget undone.
#include "random_trace.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/simplify.h"
#include "dragon/schedule/index_map.h"

namespace dragon::schedule::testing {
namespace {

const std::vector<std::string> kCpuScopes = {"global", "local"};
const std::vector<std::string> kGpuScopes = {"shared", "local", "shared.dyn"};
const std::vector<std::string> kAnyScopes = {"global", "shared", "local", "shared.dyn"};

class Generator {
 public:
  Generator(Schedule& sch, uint64_t seed, const RandomTraceOptions& options, RandomTraceStats& stats)
      : sch_(sch), rng_(static_cast<int64_t>(seed)), options_(options), stats_(stats) {}

  // One random step; undone (the schedule restored from a copy, which shares the IR)
  // when it exceeds the work budget.
  void step() {
    const bool loops = options_.loop_steps, blocks_too = options_.block_steps;
    if (!loops && !blocks_too) return;
    Schedule saved = sch_.copy();
    step_applied_.clear();
    step_reassociated_ = false;
    std::vector<BlockRV> blocks = sch_.get_child_blocks(sch_.get_block("root"));
    if (blocks.empty()) return;
    BlockRV block = pick(blocks);
    if (options_.reindex_steps && rng_.uniform_int(0, 3) == 0) {
      reindex_step(block);
    } else if (loops && (!blocks_too || rng_.uniform_int(0, 2) == 0)) {
      loop_step(block);
    } else {
      block_step(block);
    }
    if (step_applied_.empty()) return;
    if (options_.max_work_growth > 0 &&
        static_cast<double>(block_instances(sch_.func())) > options_.max_work_growth * budget_base_) {
      sch_ = std::move(saved);
      ++stats_.undone;
      return;
    }
    for (const auto& [name, count] : step_applied_) {
      stats_.applied_by_step[name] += count;
      stats_.applied += count;
    }
    stats_.reassociated |= step_reassociated_;
  }

 private:
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[rng_.uniform_int(0, static_cast<int64_t>(items.size()))];
  }
  bool coin() { return rng_.uniform_int(0, 2) == 1; }
  bool gpu() const { return options_.style != TargetStyle::kCpu; }
  bool cpu() const { return options_.style != TargetStyle::kGpu; }
  const std::vector<std::string>& scopes() const {
    switch (options_.style) {
      case TargetStyle::kCpu: return kCpuScopes;
      case TargetStyle::kGpu: return kGpuScopes;
      case TargetStyle::kAny: break;
    }
    return kAnyScopes;
  }

  // Runs one primitive. A ScheduleError must leave the function as it was and record at
  // most `may_record` pure instructions (a sample taken before the refusing primitive).
  bool attempt(const std::string& name, const std::function<void()>& primitive, size_t may_record = 0) {
    const ir::PrimFunc before = sch_.func();
    const size_t trace_size = sch_.trace().size();
    ++stats_.attempted;
    try {
      primitive();
    } catch (const ScheduleError& e) {
      if (!sch_.func().same_as(before) || sch_.trace().size() > trace_size + may_record) {
        stats_.broken.push_back(fmt::format("{} changed the schedule although it failed: {}", name, e.what()));
      }
      return false;
    }
    ++step_applied_[name];
    return true;
  }

  void loop_step(BlockRV block) {
    std::vector<LoopRV> loops = sch_.get_loops(block);
    if (loops.empty()) {
      attempt("add_unit_loop", [&] { sch_.add_unit_loop(block); });
      return;
    }
    const int64_t n = static_cast<int64_t>(loops.size());
    LoopRV loop = pick(loops);
    switch (rng_.uniform_int(0, 11)) {
      case 0:
      case 1: {  // random factors, perhaps non-divisible, one maybe inferred
        int64_t extent = ir::as_const_int(sch_.get(loop)->extent).value_or(1);
        int parts = static_cast<int>(rng_.uniform_int(2, 4));
        int64_t inferred = rng_.uniform_int(-1, parts);
        std::vector<SplitFactor> factors;
        for (int i = 0; i < parts; ++i) {
          if (i == inferred) {
            factors.push_back(None{});
          } else {
            factors.push_back(rng_.uniform_int(1, std::max<int64_t>(2, std::min<int64_t>(extent, 9)) + 1));
          }
        }
        bool preserve = coin();
        attempt("split", [&] { sch_.split(loop, factors, preserve); });
        break;
      }
      case 2: {
        int parts = static_cast<int>(rng_.uniform_int(2, 4));
        attempt(
            "split_sampled",
            [&] {
              std::vector<ExprRV> tile = sch_.sample_perfect_tile(loop, parts, 8);
              sch_.split(loop, std::vector<SplitFactor>(tile.begin(), tile.end()));
            },
            1);
        break;
      }
      case 3: {  // two or three adjacent loops
        if (n < 2) break;
        int64_t first = rng_.uniform_int(0, n - 1);
        int64_t count = std::min<int64_t>(n - first, rng_.uniform_int(2, 4));
        attempt("fuse", [&] { sch_.fuse(std::vector<LoopRV>(loops.begin() + first, loops.begin() + first + count)); });
        break;
      }
      case 4:
      case 5: {  // a random window, shuffled
        if (n < 2 || !options_.reassociation) break;
        int64_t first = rng_.uniform_int(0, n - 1);
        int64_t last = rng_.uniform_int(first + 1, n);
        std::vector<LoopRV> window(loops.begin() + first, loops.begin() + last + 1);
        for (size_t i = window.size(); i-- > 1;) std::swap(window[i], window[rng_.uniform_int(0, i + 1)]);
        if (attempt("reorder", [&] { sch_.reorder(window); })) step_reassociated_ = true;
        break;
      }
      case 6: {  // plain and sampled annotations
        if (coin()) {
          attempt("annotate", [&] {
            ExprRV v = sch_.sample_categorical({0, 16, 64}, {0.3, 0.3, 0.4});
            sch_.annotate(block, "meta_schedule.unroll_explicit", v);
          });
        } else {
          int64_t step = rng_.uniform_int(0, 64);
          attempt("annotate", [&] { sch_.annotate(loop, "pragma_auto_unroll_max_step", step); });
        }
        break;
      }
      case 7:
      case 8: {  // the style's loop kinds
        static const char* kTags[] = {"blockIdx.x", "threadIdx.x", "vthread.y", "threadIdx.z"};
        int64_t kind = rng_.uniform_int(cpu() ? 0 : 2, gpu() ? 4 : 3);
        switch (kind) {
          case 0: attempt("parallel", [&] { sch_.parallel(loop); }); break;
          case 1: attempt("vectorize", [&] { sch_.vectorize(loop); }); break;
          case 2: attempt("unroll", [&] { sch_.unroll(loop); }); break;
          default: {
            std::string tag = kTags[rng_.uniform_int(0, 4)];
            attempt("bind", [&] { sch_.bind(loop, tag); });
            break;
          }
        }
        break;
      }
      case 9: {
        if (gpu()) {
          gpu_bind(block);
          break;
        }
        [[fallthrough]];
      }
      default: {
        BlockOrLoop target = coin() ? BlockOrLoop(block) : BlockOrLoop(loop);
        attempt("add_unit_loop", [&] { sch_.add_unit_loop(target); });
        break;
      }
    }
  }

  // GPU recipe: fuse the leading loops, split by a thread count, bind blockIdx.x and
  // threadIdx.x. Stops at the first refusal (what succeeded stays).
  void gpu_bind(BlockRV block) {
    std::vector<LoopRV> loops = sch_.get_loops(block);
    if (loops.empty()) return;
    int64_t count = std::min<int64_t>(static_cast<int64_t>(loops.size()), rng_.uniform_int(1, 4));
    LoopRV fused = loops[0];
    if (count > 1 && !attempt("gpu_bind", [&] { fused = sch_.fuse(std::vector<LoopRV>(loops.begin(), loops.begin() + count)); })) return;
    int64_t threads = int64_t{1} << rng_.uniform_int(2, 6);
    std::vector<LoopRV> parts;
    if (!attempt("gpu_bind", [&] { parts = sch_.split(fused, {None{}, threads}); })) return;
    if (!attempt("gpu_bind", [&] { sch_.bind(parts[0], "blockIdx.x"); })) return;
    attempt("gpu_bind", [&] { sch_.bind(parts[1], "threadIdx.x"); });
  }

  // GPU recipe (MetaSchedule's cooperative fetch): a shared copy of one input computed at
  // a loop of the block, its own loops fused, split and bound to threadIdx.x.
  void cooperative_fetch(BlockRV block) {
    const int64_t reads = static_cast<int64_t>(sch_.get(block)->reads.size());
    std::vector<LoopRV> loops = sch_.get_loops(block);
    if (reads == 0 || loops.empty()) return;
    const int64_t index = rng_.uniform_int(0, reads);
    BlockRV cache;
    if (!attempt("cooperative_fetch", [&] { cache = sch_.cache_read(block, index, "shared"); })) return;
    LoopRV at = pick(loops);
    if (!attempt("cooperative_fetch", [&] { sch_.compute_at(cache, at, true, -1); })) return;
    const size_t own = sch_.get(cache)->iter_vars.size();
    std::vector<LoopRV> cache_loops = sch_.get_loops(cache);
    if (own == 0 || cache_loops.size() < own) return;
    LoopRV fused = cache_loops.back();
    if (own > 1 &&
        !attempt("cooperative_fetch", [&] { fused = sch_.fuse(std::vector<LoopRV>(cache_loops.end() - static_cast<std::ptrdiff_t>(own), cache_loops.end())); })) {
      return;
    }
    int64_t threads = int64_t{1} << rng_.uniform_int(2, 6);
    std::vector<LoopRV> parts;
    if (!attempt("cooperative_fetch", [&] { parts = sch_.split(fused, {None{}, threads}); })) return;
    attempt("cooperative_fetch", [&] { sch_.bind(parts[1], "threadIdx.x"); });
  }

  // pad_einsum by random paddings (a quarter of the steps), reindex of a random read or
  // write (indices past the end too), or transform_block_layout by a random permutation
  // of the iteration variables whose neighbours of one kind are fused at random.
  void reindex_step(BlockRV block) {
    const ir::BlockNode* node = sch_.get(block);
    if (rng_.uniform_int(0, 4) == 0) {
      // pad_einsum: each variable's padding 1 or 2..4 (one too few or too many at times);
      // half the time every read and the write reindexed first, as padding needs them.
      if (coin()) {
        const size_t reads = node->reads.size();
        for (size_t r = 0; r < reads; ++r) {
          attempt("reindex", [&] { sch_.reindex(block, static_cast<int64_t>(r), Schedule::BufferIndexType::kRead); });
        }
        attempt("reindex", [&] { sch_.reindex(block, 0, Schedule::BufferIndexType::kWrite); });
        node = sch_.get(block);
      }
      std::vector<int64_t> padding;
      for (size_t p = 0; p < node->iter_vars.size(); ++p) padding.push_back(coin() ? 1 : rng_.uniform_int(2, 5));
      if (rng_.uniform_int(0, 8) == 0) {
        if (padding.empty() || coin()) padding.push_back(2);
        else padding.pop_back();
      }
      const ir::PrimFunc before = sch_.func();
      if (attempt("pad_einsum", [&] { sch_.pad_einsum(block, padding); }) && !sch_.func().same_as(before)) {
        ++step_applied_["pad_einsum (grew)"];
      }
      return;
    }
    if (coin()) {
      const bool read = coin();
      const int64_t n = static_cast<int64_t>(read ? node->reads.size() : node->writes.size());
      const int64_t index = rng_.uniform_int(0, n + 1);
      attempt("reindex", [&] {
        sch_.reindex(block, index, read ? Schedule::BufferIndexType::kRead : Schedule::BufferIndexType::kWrite);
      });
      return;
    }
    std::vector<std::string> names;
    std::vector<int64_t> extents;
    std::vector<size_t> order;
    for (size_t p = 0; p < node->iter_vars.size(); ++p) {
      std::optional<int64_t> extent = ir::as_const_int(node->iter_vars[p].dom.extent);
      if (!extent) return;
      names.push_back(node->iter_vars[p].var.name());
      extents.push_back(*extent);
      order.push_back(p);
    }
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng_.uniform_int(0, static_cast<int64_t>(i))]);
    std::vector<std::vector<size_t>> groups;
    for (size_t p : order) {
      const bool fuse = !groups.empty() && node->iter_vars[groups.back().back()].kind == node->iter_vars[p].kind && coin();
      if (fuse) {
        groups.back().push_back(p);
      } else {
        groups.push_back({p});
      }
    }
    const IndexMap map = IndexMap::fusing(names, extents, groups);
    // A new order of the reduction variables reassociates the sums.
    if (attempt("transform_block_layout", [&] { sch_.transform_block_layout(block, map); })) {
      step_reassociated_ = true;
    }
  }

  void block_step(BlockRV block) {
    const ir::BlockNode* node = sch_.get(block);
    const int64_t reads = static_cast<int64_t>(node->reads.size());
    const int64_t writes = static_cast<int64_t>(node->writes.size());
    std::vector<LoopRV> loops = sch_.get_loops(block);
    const std::string scope = pick(scopes());
    switch (rng_.uniform_int(0, 13)) {
      case 0: {
        int64_t index = rng_.uniform_int(0, reads + 1);
        attempt("cache_read", [&] { sch_.cache_read(block, index, scope); });
        break;
      }
      case 1: {
        int64_t index = rng_.uniform_int(0, writes + 1);
        attempt("cache_write", [&] { sch_.cache_write(block, index, scope); });
        break;
      }
      case 2: {
        int64_t index = rng_.uniform_int(0, writes + 1);
        attempt("set_scope", [&] { sch_.set_scope(block, index, scope); });
        break;
      }
      case 3:
      case 4: {  // under a loop of a consumer (or of any block when it has none)
        std::vector<BlockRV> hosts = sch_.get_consumers(block);
        if (hosts.empty()) hosts = sch_.get_child_blocks(sch_.get_block("root"));
        std::vector<LoopRV> host_loops = sch_.get_loops(pick(hosts));
        if (host_loops.empty()) break;
        LoopRV at = pick(host_loops);
        bool preserve = coin();
        int64_t index = coin() ? -1 : -2;
        attempt("compute_at", [&] { sch_.compute_at(block, at, preserve, index); });
        break;
      }
      case 5: {  // under a loop of a producer
        std::vector<BlockRV> hosts = sch_.get_producers(block);
        if (hosts.empty()) hosts = sch_.get_child_blocks(sch_.get_block("root"));
        std::vector<LoopRV> host_loops = sch_.get_loops(pick(hosts));
        if (host_loops.empty()) break;
        LoopRV at = pick(host_loops);
        bool preserve = coin();
        int64_t index = coin() ? -1 : -2;
        attempt("reverse_compute_at", [&] { sch_.reverse_compute_at(block, at, preserve, index); });
        break;
      }
      case 6: attempt("compute_inline", [&] { sch_.compute_inline(block); }); break;
      case 7: attempt("reverse_compute_inline", [&] { sch_.reverse_compute_inline(block); }); break;
      case 8: {
        if (loops.empty()) break;
        LoopRV at = pick(loops);
        attempt("decompose_reduction", [&] { sch_.decompose_reduction(block, at); });
        break;
      }
      case 9: {
        if (loops.empty() || !options_.reassociation) break;
        LoopRV at = pick(loops);
        int64_t axis = rng_.uniform_int(-2, 3);
        if (attempt("rfactor", [&] { sch_.rfactor(at, axis); })) step_reassociated_ = true;
        break;
      }
      case 10: {
        if (loops.empty()) break;
        LoopRV at = pick(loops);
        bool preserve = coin();
        attempt("blockize", [&] { sch_.blockize(at, preserve); });
        break;
      }
      case 11: {  // TVM's random compute location: sample, then compute_at there
        LoopRV location;
        if (!attempt("sample_compute_location", [&] { location = sch_.sample_compute_location(block); })) break;
        bool preserve = coin();
        if (!attempt("sampled_compute_at", [&] { sch_.compute_at(block, location, preserve, -1); })) {
          stats_.broken.push_back(fmt::format("compute_at refused the location sampled for block '{}'",
                                              sch_.get(block)->name));
        }
        break;
      }
      default: {
        if (gpu()) {
          cooperative_fetch(block);
        } else {
          int64_t index = rng_.uniform_int(0, reads + 1);
          attempt("cache_read", [&] { sch_.cache_read(block, index, scope); });
        }
        break;
      }
    }
  }

  Schedule& sch_;
  RandomEngine rng_;
  const RandomTraceOptions& options_;
  RandomTraceStats& stats_;
  const double budget_base_ = static_cast<double>(std::max<int64_t>(1, block_instances(sch_.original())));
  std::map<std::string, int> step_applied_;  // successes of the current step
  bool step_reassociated_ = false;
};

class InstanceCounter : public ir::StmtVisitor {
 public:
  int64_t total = 0;

 protected:
  void visit_(const ir::ForNode* op) override {
    int64_t extent = ir::as_const_int(op->extent).value_or(analyzer_.const_int_bound(op->extent).max.value_or(1));
    const int64_t outer = trips_;
    trips_ = outer * std::max<int64_t>(extent, 0);
    analyzer_.bind(op->loop_var, ir::Range{op->min, op->extent});
    ir::StmtVisitor::visit_(op);
    trips_ = outer;
  }
  void visit_(const ir::BlockRealizeNode* op) override {
    total += trips_;
    ir::StmtVisitor::visit_(op);
  }

 private:
  int64_t trips_ = 1;
  ir::Analyzer analyzer_;
};

}  // namespace

int64_t block_instances(const ir::PrimFunc& func) {
  InstanceCounter counter;
  counter.visit(func->body);
  return counter.total;
}

Schedule random_schedule(const ir::PrimFunc& func, uint64_t seed, const RandomTraceOptions& options,
                         RandomTraceStats* stats) {
  RandomTraceStats local;
  RandomTraceStats& out = stats != nullptr ? *stats : local;
  // The schedule's own engine (sampling instructions) is seeded apart from the
  // generator's choices, both from `seed`.
  RandomEngine seeds(static_cast<int64_t>(seed));
  Schedule sch(func, seeds.fork_seed());
  Generator generator(sch, static_cast<uint64_t>(seeds.fork_seed()), options, out);
  for (int s = 0; s < options.steps; ++s) generator.step();
  return sch;
}

}  // namespace dragon::schedule::testing
