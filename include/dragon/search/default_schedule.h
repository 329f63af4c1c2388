// The untuned default schedule: what `dragon bench`, `dragon run --target cuda` and the
// suites run when no tuned record exists. On the GPU every block nest is bound to
// blockIdx/threadIdx (AutoBind; an elementwise nest in 16-byte vectors where its extent
// allows, as eager's elementwise kernels access memory), and a reduction over a long axis is spread over the
// threads of a block (a cross-thread reduction: per-thread partial sums combined by a
// tree), and over blocks as well when it is too long for one block (partial sums per
// block into a workspace, summed by a second nest), so no long sum runs serially in one
// thread. Deterministic (no sampling). Not the
// design space (design_space.h) and not a tuned schedule.
#pragma once

#include <cstdint>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"

namespace dragon::search {

struct DefaultScheduleOptions {
  // Thread blocks before each thread loops over the rest of a nest: 8 per SM of the
  // H200's 132, enough to fill it several times over.
  int64_t max_threadblocks = 1056;
  // Threads per block for a nest without a reduction across threads.
  int64_t threads_per_block = 256;
  // A reduction whose reduce extent (the product of its reduce loops) is above this is
  // spread over threads; at or below it, each thread sums its own outputs serially. f32
  // sums of a few thousand terms stay well within the harness's 1e-5 (normalised) of an
  // f64 reference; KernelBench's failures were over 32 000 to 16 M terms.
  int64_t serial_reduction_limit = 2048;
  // The most terms one thread folds serially before the tree, when the thread count
  // allows (the thread count is the least power of two keeping each share at or below
  // it, at most max_reduction_threads).
  int64_t terms_per_thread = 256;
  int64_t max_reduction_threads = 1024;
  // The most terms one thread may sum serially. A reduction one block's threads cannot
  // share within this (over max_reduction_threads * max_terms_per_thread terms with its
  // terms on threadIdx.x; over 32 * max_terms_per_thread with outputs there) spans
  // blocks: rfactor makes a partial-sums nest of chunks of at most threads *
  // terms_per_thread terms, each chunk a block, and a write-back nest sums the partials.
  // KernelBench 37, 94 and 96 sum 2^30 and more terms: in one block, millions per thread.
  int64_t max_terms_per_thread = 4096;
  // A scan of at most this many rows (the product of its spatial extents) over an axis
  // of at least min_chunked_scan_extent runs in chunks in parallel (chunk_scan) instead
  // of one thread walking each row.
  int64_t max_chunked_scan_rows = 256;
  int64_t min_chunked_scan_extent = 8192;
  // The carries of a chunked scan are a scan over its chunks, one thread a row, each step
  // a load of a chunk's total: past this many chunks they run in chunks too. (R11's 417
  // chunks of 512 would otherwise be 417 dependent steps through L2.)
  int64_t min_chunked_carry_extent = 256;
  // A function with a GEMM or a convolution the tensor-core rule takes runs its tensor-core
  // sketch under rule-of-thumb decisions (space/tensor_core_default.h) where that sketch
  // fits the GPU; the rest of the function as its sketch schedules it.
  bool tensor_cores = true;
};

// The default schedule of `func` for `target`, through the Schedule API (its trace
// replays it). For the CPU the function is left as it is (the CPU backend runs any
// schedule). Blocks already under blockIdx loops are left alone, so it also completes a
// partial schedule. Throws only for a function the schedule primitives reject as
// malformed (a bug).
schedule::Schedule default_schedule(const ir::PrimFunc& func, const lower::Target& target,
                                    const DefaultScheduleOptions& options = {});

// Applies the default schedule to the nests `sch` left unbound (the same rules as
// default_schedule, on a schedule in progress); returns how many nests it bound.
int apply_default_schedule(schedule::Schedule& sch, const lower::Target& target,
                           const DefaultScheduleOptions& options = {});

}  // namespace dragon::search
