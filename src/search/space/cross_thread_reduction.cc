// CrossThreadReduction (MetaSchedule's rule) and the steps it shares with the default
// schedule (cross_thread_reduction.h). For a reduction with few outputs and many terms,
// the rule samples a thread count, computes the block at its consumer's loop when it can
// (one kernel; the result lives in shared memory) and spreads the reduce loops over
// threadIdx.x, with a thread count leaving no thread more than serial_reduction_limit
// terms where one exists. It forks {across threads, untouched}, and drops the untouched
// schedule when the reduction is too long to sum serially in one thread.
#include "space/cross_thread_reduction.h"

#include <algorithm>
#include <functional>
#include <map>

#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"
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

std::optional<ArrangedReductionLoops> arrange_reduction_loops(Schedule& sch, BlockRV block, ir::IterKind inner) {
  std::vector<LoopRV> loops = sch.get_loops(block);
  if (loops.empty()) return std::nullopt;
  if (inner == ir::IterKind::kOrdered) {
    for (const ir::IterVar& iv : sch.get(block)->iter_vars) {
      if (iv.kind != ir::IterKind::kSpatial && iv.kind != ir::IterKind::kOrdered) return std::nullopt;
    }
  }
  // A loop feeding only the kind that goes inside.
  auto goes_inside = [&](const LoopFeeds& f) {
    return inner == ir::IterKind::kOrdered ? f.other && !f.spatial && !f.reduce : f.only_reduce();
  };
  // The block's own loops: the innermost chain of single loops down to the block alone.
  // Loops above it are shared with other blocks (a consumer's loop it was computed at).
  size_t own = loops.size();
  const ir::StmtNode* below = nullptr;
  for (size_t i = loops.size(); i-- > 0;) {
    const ir::ForNode* f = sch.get(loops[i]);
    bool chained = below != nullptr ? f->body.get() == below : [&] {
      const auto* realize = f->body.as<ir::BlockRealizeNode>();
      return realize != nullptr && realize->block.get() == sch.get(block);
    }();
    if (!chained) break;
    own = i;
    below = f;
  }
  ArrangedReductionLoops out;
  std::vector<LoopRV> chain_spatial, reduce;
  bool interleaved = false;
  for (size_t i = 0; i < loops.size(); ++i) {
    const ir::ForNode* f = sch.get(loops[i]);
    LoopFeeds feeds = loop_feeds(f);
    bool reduces = feeds.reduce || feeds.other;
    if (i < own) {
      if (reduces) return std::nullopt;  // a shared loop feeding the reduction
      out.spatial.push_back(loops[i]);
      continue;
    }
    if (f->for_kind != ir::ForKind::kSerial || !f->annotations.empty()) return std::nullopt;
    if (goes_inside(feeds)) {
      reduce.push_back(loops[i]);
    } else if (!reduces) {
      chain_spatial.push_back(loops[i]);
      interleaved = interleaved || !reduce.empty();
    } else {
      return std::nullopt;  // one loop feeding both kinds
    }
  }
  if (reduce.empty()) return std::nullopt;
  if (interleaved) {
    std::vector<LoopRV> order = chain_spatial;
    order.insert(order.end(), reduce.begin(), reduce.end());
    sch.reorder(order);
  }
  out.spatial.insert(out.spatial.end(), chain_spatial.begin(), chain_spatial.end());
  out.reduce = std::move(reduce);
  return out;
}

std::optional<ReductionLoops> gather_reduction_loops(Schedule& sch, BlockRV block) {
  std::optional<ArrangedReductionLoops> arranged = arrange_reduction_loops(sch, block);
  if (!arranged) return std::nullopt;
  LoopRV reduce = arranged->reduce.size() == 1 ? arranged->reduce[0] : sch.fuse(arranged->reduce);
  return ReductionLoops{std::move(arranged->spatial), reduce};
}

LoopRV bind_reduction_to_threads(Schedule& sch, LoopRV reduce, const SplitFactor& threads,
                                 const std::string& thread_axis) {
  std::vector<LoopRV> parts = sch.split(reduce, {schedule::None{}, threads});
  sch.bind(parts[1], thread_axis);
  return parts[0];
}

bool lowers_across_threads(const ir::PrimFunc& func, const lower::Target& target) {
  try {
    lower::lower_cross_thread_reduction(func, target);
    return true;
  } catch (const UserError&) {
    return false;
  }
}

namespace {

// The sampled thread extent feeding the threadIdx.x loop above `block`, when a split by a
// sampled value made it: a block fused into that nest shares it, so mutating it keeps the
// kernel's blocks agreeing.
std::optional<ExprRV> thread_extent_of(const Schedule& sch, const std::vector<const ir::ForNode*>& loops) {
  std::map<int64_t, ExprRV> factor_of_loop;  // loop RV id -> sampled factor of the split that made it
  std::optional<ExprRV> found;
  for (const schedule::Instruction& inst : sch.trace().instructions()) {
    if (inst.kind == schedule::InstructionKind::Split) {
      for (size_t i = 0; i < inst.outputs.size() && i + 1 < inst.inputs.size(); ++i) {
        if (const auto* rv = inst.inputs[i + 1].as<schedule::RandomVar>(); rv && rv->type == schedule::RVType::kExpr) {
          factor_of_loop[inst.outputs[i].id] = ExprRV{rv->id};
        }
      }
    } else if (inst.kind == schedule::InstructionKind::Bind && !inst.attrs.empty() && !inst.inputs.empty()) {
      const auto* axis = inst.attrs[0].as<std::string>();
      const auto* loop = inst.inputs[0].as<schedule::RandomVar>();
      if (axis == nullptr || *axis != "threadIdx.x" || loop == nullptr) continue;
      auto it = factor_of_loop.find(loop->id);
      if (it == factor_of_loop.end() || !sch.is_valid(schedule::LoopRV{loop->id})) continue;
      const ir::ForNode* bound = sch.get(schedule::LoopRV{loop->id});
      if (std::find(loops.begin(), loops.end(), bound) != loops.end()) found = it->second;
    }
  }
  return found;
}

class CrossThreadReduction : public ScheduleRule {
 public:
  struct Options {
    std::vector<int64_t> thread_extents;
    int64_t min_reduce_extent = 32;
    int64_t max_parallel_extent = 0;
    int64_t serial_reduction_limit = 4096;
    bool fuse_into_consumer = true;
  };
  CrossThreadReduction(Options options, lower::Target target) : options_(std::move(options)), target_(std::move(target)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    if (!site || !needs_cross_thread(*site)) return {};
    int64_t reduce = reduce_extent(site->block);
    std::vector<Schedule> out;
    for (bool fuse : {options_.fuse_into_consumer, false}) {
      if (std::optional<Schedule> across = try_across_threads(sch, block, reduce, fuse)) {
        out.push_back(std::move(*across));
        break;
      }
      if (!options_.fuse_into_consumer) break;
    }
    if (out.empty()) return {};
    if (reduce <= options_.serial_reduction_limit) out.push_back(sch);
    return out;
  }

 private:
  bool needs_cross_thread(const BlockSite& site) const {
    const ir::BlockNode* b = site.block;
    if (!is_reduction(b) || b->writes.size() != 1 || has_ordered_vars(b) || !has_trivial_bindings(site)) return false;
    if (b->annotations.count("meta_schedule.tiling_structure") != 0) return false;
    for (const ir::ForNode* l : site.loops) {
      if (l->for_kind != ir::ForKind::kSerial) return false;
    }
    int64_t reduce = reduce_extent(b), spatial = spatial_extent(b);
    if (is_matmul_like(b)) {
      // Enough parallelism in the outputs: multi-level tiling's business.
      return spatial < reduce && spatial <= options_.max_parallel_extent;
    }
    return reduce > options_.min_reduce_extent;
  }

  // The thread counts to sample: within the target and the reduction, and enough that no
  // thread sums more than serial_reduction_limit terms (4 threads on a 2^18-term sum
  // would leave each 65536); the most there are when none is enough (a sum that long is
  // add_rfactor's to split across blocks).
  std::vector<int64_t> fitting_extents(int64_t reduce) const {
    std::vector<int64_t> fitting;
    int64_t most = 0;
    for (int64_t t : options_.thread_extents) {
      if (t > target_.max_threads_per_block || t > reduce) continue;
      most = std::max(most, t);
      if ((reduce + t - 1) / t <= options_.serial_reduction_limit) fitting.push_back(t);
    }
    if (fitting.empty() && most > 0) fitting.push_back(most);
    if (fitting.empty()) fitting.push_back(*std::min_element(options_.thread_extents.begin(), options_.thread_extents.end()));
    return fitting;
  }

  std::optional<Schedule> try_across_threads(const Schedule& sch, const std::string& name, int64_t reduce,
                                             bool fuse) const {
    Schedule s = sch.copy();
    try {
      BlockRV block = s.get_block(name);
      std::vector<int64_t> extents = fitting_extents(reduce);
      auto sample = [&]() -> SplitFactor {
        return s.sample_categorical(extents, std::vector<double>(extents.size(), 1.0 / extents.size()));
      };
      std::optional<SplitFactor> threads;
      if (fuse && !fuse_into_consumer(s, block, threads, sample)) return std::nullopt;
      std::optional<ReductionLoops> loops = gather_reduction_loops(s, block);
      if (!loops) return std::nullopt;
      bind_reduction_to_threads(s, loops->reduce, threads ? *threads : sample(), "threadIdx.x");
    } catch (const ScheduleError&) {
      return std::nullopt;
    }
    if (!lowers_across_threads(s.func(), target_)) return std::nullopt;
    return s;
  }

  // TVM's block fusion: the block moves under its first consumer's loop at the depth of
  // its own leading spatial loops; the consumer's innermost loop is spread over the same
  // threads (or keeps the ones it has); the block's output goes to shared memory.
  bool fuse_into_consumer(Schedule& s, BlockRV block, std::optional<SplitFactor>& threads,
                          const std::function<SplitFactor()>& sample) const {
    std::vector<BlockRV> consumers = s.get_consumers(block);
    if (consumers.empty()) return false;
    BlockRV consumer = consumers.front();
    std::optional<BlockSite> consumer_site = find_block(s.func(), s.get(consumer)->name);
    if (!consumer_site || is_matmul_like(consumer_site->block)) return false;
    std::vector<LoopRV> block_loops = s.get_loops(block);
    std::vector<LoopRV> target_loops = s.get_loops(consumer);
    int leading_spatial = 0;
    while (leading_spatial < static_cast<int>(block_loops.size()) &&
           loop_feeds(s.get(block_loops[leading_spatial])).only_spatial()) {
      ++leading_spatial;
    }
    int position = std::min<int>(leading_spatial, static_cast<int>(std::min(block_loops.size(), target_loops.size()))) - 1;
    if (position < 0 || target_loops.empty()) return false;
    LoopRV target_loop = target_loops[position];
    if (has_thread_binding(*consumer_site)) {
      std::optional<ExprRV> shared = thread_extent_of(s, consumer_site->loops);
      if (!shared) return false;
      threads = *shared;
    } else {
      LoopRV innermost = target_loops.back();
      if (s.get(innermost)->for_kind != ir::ForKind::kSerial) return false;
      threads = sample();
      std::vector<LoopRV> parts = s.split(innermost, {schedule::None{}, *threads});
      s.bind(parts[1], "threadIdx.x");
      if (position == static_cast<int>(target_loops.size()) - 1) target_loop = parts[0];
    }
    s.compute_at(block, target_loop, /*preserve_unit_loops=*/true);
    s.set_scope(block, 0, "shared");
    return true;
  }

  Options options_;
  lower::Target target_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_cross_thread_reduction_rule(ParamReader& params, const lower::Target& target) {
  CrossThreadReduction::Options options;
  options.thread_extents = params.get_ints("thread_extents", {4, 8, 16, 32, 64, 128, 256, 512, 1024});
  options.min_reduce_extent = params.get_int("min_reduce_extent", target.warp_size > 0 ? target.warp_size : 32);
  // Outputs enough to fill the GPU without splitting the reduction: 2048 threads on each
  // of an H200's 132 SMs.
  options.max_parallel_extent = params.get_int("max_parallel_extent", 2048 * 132);
  options.serial_reduction_limit = params.get_int("serial_reduction_limit", 4096);
  options.fuse_into_consumer = params.get_bool("fuse_into_consumer", true);
  if (options.thread_extents.empty()) throw UserError("rule cross_thread_reduction: thread_extents is empty");
  return std::make_unique<CrossThreadReduction>(std::move(options), target);
}

}  // namespace dragon::search
