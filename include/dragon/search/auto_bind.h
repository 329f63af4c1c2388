// AutoBind: MetaSchedule's default GPU thread binding for block nests a schedule left
// unbound (the AutoBind rule / RewriteUnboundBlock postprocessor), applied through the
// Schedule API so every step is recorded in the trace. Not a search strategy.
#pragma once

#include <cstdint>
#include <vector>

#include "dragon/schedule/schedule.h"

namespace dragon::search {

struct AutoBindOptions {
  // Threads per block when not sampled: min(fused extent, this).
  int64_t max_threads_per_block = 256;
  // Above max_threadblocks * threads, the fused loop is split [serial, blocks, threads],
  // reordered to (blocks, threads, serial): each thread loops over the rest.
  int64_t max_threadblocks = 256;
  // When not empty, the block count of that split is sampled uniformly among these
  // (max_threadblocks otherwise). 256 blocks of 256 threads keep a quarter of an H200's or
  // H100's 132 multiprocessors' threads busy: a large elementwise kernel then has too few
  // loads in flight to reach the memory's bandwidth; 1056 fill every multiprocessor.
  std::vector<int64_t> threadblock_candidates;
  // When not empty, the thread count is sampled uniformly (sample_categorical) among the
  // candidates that are <= min(fused extent, max_threads_per_block) (MetaSchedule's rule:
  // 32, 64, ..., 1024); the smallest candidate when none fits.
  std::vector<int64_t> thread_extent_candidates;
  // When not empty and the fused loops are the whole nest (nothing below them: an
  // elementwise nest), the number of consecutive elements each thread handles as one
  // vector is sampled uniformly among the candidates that divide the fused extent (1, a
  // scalar thread, among them), split off innermost and vectorized before the thread
  // split. Memory-bound kernels need 128-bit accesses to approach the bandwidth (eager's
  // elementwise kernels use them; 4 f32 lanes); the code generator falls back to scalar
  // code for an access that is not contiguous in the lanes.
  std::vector<int64_t> vector_lanes_candidates;
  // When vector_lanes_candidates is empty and this is above 0 (the untuned default
  // schedule's choice, not sampled): an elementwise nest takes as many lanes as fit this
  // many bytes of its widest element (16: four f32, eight f16), halved until they divide
  // its extent; none when only 1 does.
  int64_t vector_bytes = 0;
};

// Binds `block`'s loop nest unless a loop above it is bound to blockIdx/threadIdx
// already (then it returns false): the outer loops that are serial, unannotated,
// data parallel (feeding only spatial variables) and each the only child of the one
// above are fused (a unit loop is added when there is none), split by the thread count
// and bound to blockIdx.x / threadIdx.x; reduction loops stay inside each thread. A nest
// whose threadIdx is bound but blockIdx not gets its outer loops fused and bound to
// blockIdx.x.
bool auto_bind_block(schedule::Schedule& sch, schedule::BlockRV block, const AutoBindOptions& options = {});

// auto_bind_block on every block directly under the root block, in program order; the
// number of nests bound. Afterwards every block runs under blockIdx/threadIdx loops.
int auto_bind(schedule::Schedule& sch, const AutoBindOptions& options = {});

}  // namespace dragon::search
