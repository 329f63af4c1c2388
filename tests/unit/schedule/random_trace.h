// Random valid schedules for tests: a seeded generator that applies random primitives
// (loop and block primitives, CPU-style or GPU-style steps) to any PrimFunc and keeps
// what succeeds within a work budget. Not a search strategy and not a test: callers
// check the result (interpreter, replay, lowering, codegen). No GoogleTest dependency,
// so any test program can compile random_trace.cc.
//
// Use from another test program: add ${PROJECT_SOURCE_DIR}/tests/unit/schedule/random_trace.cc
// to its dragon_test SOURCES (DEPS dragon_schedule, plus dragon_ops for workloads), then
//   #include "unit/schedule/random_trace.h"
//   ir::PrimFunc func = ops::OpRegistry::global().make_workload(op.name).func;
//   testing::RandomTraceOptions options;
//   options.style = testing::TargetStyle::kGpu;          // or kCpu, kAny
//   testing::RandomTraceStats stats;
//   Schedule sch = testing::random_schedule(func, seed, options, &stats);
//   ... lower / compile sch.func(); compare with the interpreter on func, bit for bit
//   unless stats.reassociated ...
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"

namespace dragon::schedule::testing {

// Which target-specific steps the generator takes.
enum class TargetStyle {
  kCpu,  // parallel / vectorize / unroll; caches in global or local scope
  kGpu,  // bind blockIdx/threadIdx over fused spatial loops, random binds, cooperative
         // fetch (a shared cache computed at a loop, fused, split and bound to threadIdx.x);
         // caches in shared, shared.dyn or local scope
  kAny,  // both
};

struct RandomTraceOptions {
  TargetStyle style = TargetStyle::kAny;
  int steps = 10;  // random steps; a step is one primitive or a short GPU recipe
  // split (random and sampled factors, non-divisible ones too), fuse, reorder, annotate,
  // add_unit_loop and the style's loop kinds.
  bool loop_steps = true;
  // cache_read, cache_write, set_scope, compute_at, reverse_compute_at, compute_inline,
  // reverse_compute_inline, decompose_reduction, rfactor, blockize, and
  // sample_compute_location followed by compute_at at the sampled location.
  bool block_steps = true;
  // Allow reorder and rfactor, which may reassociate a reduction (results then agree
  // only within rounding; RandomTraceStats::reassociated says when it happened).
  bool reassociation = true;
  // A step after which the function would run more than this many times as many block
  // instances as the unscheduled one is undone (compute_at of a reduction, or a shared
  // copy relaxed over many threads, repeats work): it keeps interpreter runs short.
  // 0: no limit.
  double max_work_growth = 4.0;
  // Also (a third of the steps) reindex a random read or write of a block, transform a
  // block's layout by a random permutation and fusion of its iteration variables, or pad
  // it (pad_einsum) by random paddings. Off by
  // default: the other users' traces stay what their seeds gave.
  bool reindex_steps = false;
};

struct RandomTraceStats {
  int attempted = 0;  // primitives tried
  int applied = 0;    // primitives that succeeded and were kept
  // A kept reorder or rfactor: compare outputs with a tolerance, not bit for bit.
  bool reassociated = false;
  // Successes kept, per step name ("split", "compute_at", "sampled_compute_at",
  // "gpu_bind", "cooperative_fetch", ...).
  std::map<std::string, int> applied_by_step;
  // Steps undone for exceeding max_work_growth.
  int undone = 0;
  // Primitives that threw a ScheduleError yet changed the function or recorded more than
  // they may (a broken primitive), or a sampled compute location that compute_at refused.
  // Always empty unless a primitive is buggy.
  std::vector<std::string> broken;
};

// A schedule of `func` after `options.steps` random steps drawn from `seed` (same
// arguments, same schedule and trace). Steps whose primitive refuses (ScheduleError) are
// skipped, steps that exceed the work budget undone; the trace holds exactly what was
// kept and replays exactly.
// `stats`, when given, receives counts and the reassociation flag (added to what it
// holds, so one stats object can sum over many schedules).
// How many block instances running `func` executes: for every block, the product of the
// extents of the loops around it (a non-constant extent counts as its upper bound).
int64_t block_instances(const ir::PrimFunc& func);

Schedule random_schedule(const ir::PrimFunc& func, uint64_t seed, const RandomTraceOptions& options = {},
                         RandomTraceStats* stats = nullptr);

}  // namespace dragon::schedule::testing
