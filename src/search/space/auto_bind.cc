// AutoBind (auto_bind.h): fuse the outer data-parallel loops of an unbound nest, split by
// a thread count, bind blockIdx.x / threadIdx.x; every step goes through the Schedule, so
// the trace replays it. Reading the IR decides which loops qualify. Also the design-space
// rule of that name (thread counts sampled), for the nests left unbound by earlier rules.
#include "dragon/search/auto_bind.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "space/block_analysis.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::ExprRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::SplitFactor;

bool uses(const ir::Expr& e, const ir::VarNode* var) {
  struct Finder : ir::ExprVisitor {
    const ir::VarNode* var;
    bool found = false;
    using ir::ExprVisitor::visit_;
    void visit_(const ir::VarNode* op) override { found = found || op == var; }
  } f;
  f.var = var;
  f.visit(e);
  return f.found;
}

// How the blocks realized under `loop` (in its scope) bind the loop's variable.
struct LoopUses {
  bool reduce = false;   // into some non-spatial iteration variable
  bool spatial = false;  // into some spatial one
};

LoopUses loop_uses(const ir::ForNode* loop) {
  struct Checker : ir::StmtVisitor {
    const ir::VarNode* var;
    LoopUses found;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::BlockRealizeNode* op) override {
      for (size_t i = 0; i < op->iter_values.size(); ++i) {
        if (!uses(op->iter_values[i], var)) continue;
        (op->block->iter_vars[i].kind == ir::IterKind::kSpatial ? found.spatial : found.reduce) = true;
      }
    }
  } c;
  c.var = loop->loop_var.get();
  c.visit(loop->body);
  return c.found;
}

// A loop of one iteration whose variable no block uses: simplification removed it from
// every binding, so it may be the outer piece of a split reduction (a cross-thread
// reduction's whose thread count covered the whole axis) as well as a spatial axis.
bool unit_and_unused(const ir::ForNode* loop) {
  const LoopUses u = loop_uses(loop);
  return !u.spatial && !u.reduce && ir::is_const_int(loop->extent, 1);
}

bool fusable(const ir::ForNode* loop) {
  return loop->for_kind == ir::ForKind::kSerial && loop->annotations.empty() && ir::is_const_int(loop->min, 0) &&
         ir::as_const_int(loop->extent).has_value();
}

int64_t extent_of(Schedule& sch, LoopRV loop) { return *ir::as_const_int(sch.get(loop)->extent); }

// `fused` split [rest, lanes] with the lanes vectorized; returns the rest.
LoopRV split_off_lanes(Schedule& sch, LoopRV fused, SplitFactor lanes) {
  std::vector<LoopRV> split = sch.split(fused, {schedule::None{}, lanes});
  sch.vectorize(split[1]);
  return split[0];
}

// The fused loop of a whole elementwise nest split [rest, lanes] with the lanes sampled
// among `candidates` that divide its extent (so no lane needs a guard) and vectorized;
// `fused` itself when fewer than two candidates divide it. Returns the loop left to bind.
LoopRV split_vector_lanes(Schedule& sch, LoopRV fused, const std::vector<int64_t>& candidates) {
  const int64_t extent = extent_of(sch, fused);
  std::vector<int64_t> dividing;
  for (int64_t c : candidates) {
    if (c >= 1 && extent % c == 0) dividing.push_back(c);
  }
  if (dividing.size() < 2) return fused;
  ExprRV lanes = sch.sample_categorical(dividing, std::vector<double>(dividing.size(), 1.0 / dividing.size()));
  return split_off_lanes(sch, fused, lanes);
}

// The fixed lane count of AutoBindOptions::vector_bytes for `block`'s fused loop of
// `extent` iterations: bytes over its widest element's size, halved until it divides.
int64_t fixed_vector_lanes(const ir::BlockNode* block, int64_t extent, int64_t vector_bytes) {
  int64_t lanes = std::max<int64_t>(1, vector_bytes / widest_element_bytes(block));
  while (lanes > 1 && extent % lanes != 0) lanes /= 2;
  return lanes;
}

}  // namespace

bool auto_bind_block(Schedule& sch, BlockRV block, const AutoBindOptions& options) {
  std::vector<LoopRV> loops = sch.get_loops(block);
  bool block_bound = false, thread_bound = false;
  size_t first_thread = loops.size();
  for (size_t i = 0; i < loops.size(); ++i) {
    const ir::ForNode* f = sch.get(loops[i]);
    if (f->for_kind != ir::ForKind::kThreadBinding) continue;
    block_bound = block_bound || f->thread_tag.starts_with("blockIdx.");
    if (f->thread_tag.starts_with("threadIdx.")) {
      thread_bound = true;
      first_thread = std::min(first_thread, i);
    }
  }
  if (block_bound) return false;
  // The fusable prefix: serial, unannotated, data-parallel loops, each the only child of
  // the one above (a loop with several children may be fused, nothing below it).
  size_t prefix = 0;
  const ir::ForNode* previous = nullptr;
  for (size_t i = 0; i < loops.size(); ++i) {
    const ir::ForNode* f = sch.get(loops[i]);
    if (previous != nullptr && previous->body.get() != static_cast<const ir::StmtNode*>(f)) break;
    if (!fusable(f) || loop_uses(f).reduce) break;
    prefix = i + 1;
    previous = f;
  }
  // The fused loops never end on a unit loop nothing uses: under other decisions (a smaller
  // thread count) the same trace may give that loop more iterations and a reduction's
  // binding, and the recorded fuse would then fail on replay. Units followed by a used
  // loop stay in: a spatial axis of extent 1 (batch 1) is the usual reason for them.
  while (prefix > 0 && unit_and_unused(sch.get(loops[prefix - 1]))) --prefix;
  if (thread_bound) prefix = std::min(prefix, first_thread);
  LoopRV fused;
  if (prefix == 0) {
    // Nothing to spread over threads (a scalar, or a reduction outermost): one thread.
    fused = loops.empty() ? sch.add_unit_loop(block) : sch.add_unit_loop(loops[0]);
  } else {
    fused = sch.fuse(std::vector<LoopRV>(loops.begin(), loops.begin() + static_cast<std::ptrdiff_t>(prefix)));
  }
  if (thread_bound) {
    sch.bind(fused, "blockIdx.x");
    return true;
  }
  if (prefix == loops.size() && prefix > 0) {
    if (!options.vector_lanes_candidates.empty()) {
      fused = split_vector_lanes(sch, fused, options.vector_lanes_candidates);
    } else if (options.vector_bytes > 0) {
      const int64_t lanes = fixed_vector_lanes(sch.get(block), extent_of(sch, fused), options.vector_bytes);
      if (lanes > 1) fused = split_off_lanes(sch, fused, lanes);
    }
  }
  int64_t extent = extent_of(sch, fused);
  int64_t limit = std::min(extent, options.max_threads_per_block);
  SplitFactor threads = limit;
  int64_t thread_count = limit;
  if (!options.thread_extent_candidates.empty()) {
    std::vector<int64_t> fitting;
    for (int64_t c : options.thread_extent_candidates) {
      if (c <= limit) fitting.push_back(c);
    }
    if (fitting.empty()) fitting.push_back(*std::min_element(options.thread_extent_candidates.begin(),
                                                              options.thread_extent_candidates.end()));
    ExprRV sampled = sch.sample_categorical(fitting, std::vector<double>(fitting.size(), 1.0 / fitting.size()));
    threads = sampled;
    thread_count = sch.get(sampled);
  }
  if (extent <= options.max_threadblocks * thread_count) {
    std::vector<LoopRV> split = sch.split(fused, {schedule::None{}, threads});
    sch.bind(split[0], "blockIdx.x");
    sch.bind(split[1], "threadIdx.x");
  } else {
    // The inferred serial factor pads the product up to a multiple of blocks x threads; near
    // 2^31 iterations that can pass what an i32 loop holds (KernelBench 38 and 39, 32768 x
    // 65535, on the H200), so take the largest block count whose padded product still fits
    // the loop's type. A loop of 2^31 or more iterations is i64 already: against an i32
    // bound no count fits, and KernelBench 87's 2^31 outputs ran in one block (38 s).
    const int64_t most = ir::int_max_value(sch.get(fused)->loop_var.dtype());
    auto padded = [&](int64_t b) {
      int64_t per_serial_step = b * thread_count;
      return (extent + per_serial_step - 1) / per_serial_step * per_serial_step;
    };
    auto fitting = [&](int64_t b) {
      while (b > 1 && padded(b) > most) --b;
      return b;
    };
    SplitFactor blocks = fitting(options.max_threadblocks);
    if (!options.threadblock_candidates.empty()) {
      std::vector<int64_t> counts;
      for (int64_t c : options.threadblock_candidates) {
        const int64_t b = fitting(std::max<int64_t>(c, 1));
        if (std::find(counts.begin(), counts.end(), b) == counts.end()) counts.push_back(b);
      }
      blocks = sch.sample_categorical(counts, std::vector<double>(counts.size(), 1.0 / counts.size()));
    }
    std::vector<LoopRV> split = sch.split(fused, {schedule::None{}, blocks, threads});
    sch.reorder({split[1], split[2], split[0]});
    sch.bind(split[1], "blockIdx.x");
    sch.bind(split[2], "threadIdx.x");
  }
  return true;
}

int auto_bind(Schedule& sch, const AutoBindOptions& options) {
  std::vector<std::string> names;
  for (BlockRV b : sch.get_child_blocks(sch.get_block("root"))) names.push_back(sch.get(b)->name);
  int bound = 0;
  for (const std::string& name : names) bound += auto_bind_block(sch, sch.get_block(name), options) ? 1 : 0;
  return bound;
}

namespace {

// The rule: binds a top-level nest nothing has bound, with the thread count sampled.
class AutoBindRule : public ScheduleRule {
 public:
  explicit AutoBindRule(AutoBindOptions options) : options_(std::move(options)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    if (!site || site->parent == nullptr || site->parent->name != "root" || has_block_binding(*site)) return {};
    Schedule bound = sch.copy();
    if (!auto_bind_block(bound, bound.get_block(block), options_)) return {};
    return {bound};
  }

 private:
  AutoBindOptions options_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_auto_bind_rule(ParamReader& params, const lower::Target& target) {
  AutoBindOptions options;
  options.max_threadblocks = params.get_int("max_threadblocks", 256);
  options.max_threads_per_block = params.get_int("max_threads_per_block", target.max_threads_per_block > 0
                                                                                ? target.max_threads_per_block
                                                                                : options.max_threads_per_block);
  options.thread_extent_candidates = params.get_ints("thread_extents", {32, 64, 128, 256, 512, 1024});
  options.vector_lanes_candidates = params.get_ints("vector_lanes", {1, 2, 4});
  // 2, 8 and 32 blocks per multiprocessor of the H200's and H100's 132.
  options.threadblock_candidates = params.get_ints("threadblocks", {264, 1056, 4224});
  return std::make_unique<AutoBindRule>(std::move(options));
}

}  // namespace dragon::search
