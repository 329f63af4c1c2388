// StagedScan (ours; MetaSchedule has no scan rule). A scan along the innermost axis
// (cumsum and its kinds: Y[r, j] from Y[r, j - 1]) runs one thread per row, each walking
// its row: a warp's loads touch 32 rows 128 KB apart, one sector each, and KernelBench's
// cumsum (32768 rows of 32768) ran 4x slower than eager so. The rule stages the rows in
// chunks: rows fused and split [blocks, threads] (blockIdx.x, threadIdx.x), the scan axis
// split [chunks, chunk] with the chunk loop outside the threads, and each input the scan
// reads along its axis copied into shared memory at the chunk loop by the block's threads
// together (cooperative fetch, coalesced), rows padded one word against bank conflicts.
// Lowering carries the running value across the chunks in a register (carry_loop_values).
// The output may be staged too: the scan writes a shared tile, copied out per chunk by the
// block's threads (coalesced stores instead of one word per row and warp store).
// Decisions: the thread count and the chunk length (categoricals over the parameters'
// values that divide the extents). Forks {input and output staged, input staged, untouched}.
#include <algorithm>
#include <optional>

#include "dragon/ir/op.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/support/error.h"
#include "space/block_analysis.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::ExprRV;
using schedule::LoopRV;
using schedule::Schedule;
using schedule::ScheduleError;

class StagedScan : public ScheduleRule {
 public:
  struct Options {
    std::vector<int64_t> thread_extents;
    std::vector<int64_t> chunk_extents;
  };
  explicit StagedScan(Options options) : options_(std::move(options)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    // Rows to spread over threads: a scan of one row is chunked_scan's.
    if (!site || site->loops.size() < 2 || !is_unscheduled_scan(*site)) return {};
    const ir::ForNode* scan_loop = site->loops.back();
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < site->loops.size(); ++i) rows *= constant_extent(site->loops[i]);
    const std::vector<int64_t> threads = dividing(options_.thread_extents, rows);
    const std::vector<int64_t> chunks = dividing(options_.chunk_extents, constant_extent(scan_loop));
    if (threads.empty() || chunks.empty()) return {};
    Schedule s = sch.copy();
    std::optional<Schedule> staged;  // the input staged, the output stored from the threads
    try {
      BlockRV b = s.get_block(block);
      std::vector<LoopRV> loops = s.get_loops(b);
      LoopRV scan = loops.back();
      loops.pop_back();
      LoopRV row = loops.size() == 1 ? loops.front() : s.fuse(loops);
      ExprRV thread_count = s.sample_categorical(threads, uniform(threads.size()));
      ExprRV chunk = s.sample_categorical(chunks, uniform(chunks.size()));
      std::vector<LoopRV> row_parts = s.split(row, {schedule::None{}, thread_count});
      std::vector<LoopRV> scan_parts = s.split(scan, {schedule::None{}, chunk});
      s.reorder({row_parts[0], scan_parts[0], row_parts[1], scan_parts[1]});
      s.bind(row_parts[0], "blockIdx.x");
      s.bind(row_parts[1], "threadIdx.x");
      // The inputs read along the scan axis (not the scan's own output, read a step back).
      const size_t n_reads = s.get(b)->reads.size();
      for (size_t i = 0; i < n_reads; ++i) {
        const ir::BlockNode* current = s.get(b);
        const ir::BufferRegion& read = current->reads[i];
        bool written = false;
        for (const ir::BufferRegion& w : current->writes) written = written || w.buffer.same_as(read.buffer);
        if (written || read.buffer->scope != "global" || read.buffer.ndim() < 2) continue;
        BlockRV copy = s.cache_read(b, static_cast<int64_t>(i), "shared", {b});
        s.compute_at(copy, scan_parts[0], /*preserve_unit_loops=*/true);
        std::vector<LoopRV> copy_loops = s.get_loops(copy);
        const size_t ndim = static_cast<size_t>(read.buffer.ndim());
        std::vector<LoopRV> own(copy_loops.end() - static_cast<std::ptrdiff_t>(ndim), copy_loops.end());
        s.fuse(own);
        s.annotate(copy, "meta_schedule.cooperative_fetch", int64_t{1});
        s.storage_align(copy, 0, -2, 32, 1);
      }
      staged = s.copy();
      // The output the same way: each thread's stores of its row (one 4-byte word per row
      // and warp store, 32 rows apart) go into a shared tile, which the block's threads copy
      // out together per chunk, coalesced. The scan's read of its previous element is carried
      // in a register by lowering, so the tile holds one chunk.
      BlockRV out_copy = s.cache_write(b, 0, "shared");
      s.reverse_compute_at(out_copy, scan_parts[0], /*preserve_unit_loops=*/true);
      std::vector<LoopRV> out_loops = s.get_loops(out_copy);
      const size_t out_ndim = static_cast<size_t>(s.get(b)->writes[0].buffer.ndim());
      s.fuse(std::vector<LoopRV>(out_loops.end() - static_cast<std::ptrdiff_t>(out_ndim), out_loops.end()));
      s.annotate(out_copy, "meta_schedule.cooperative_fetch", int64_t{1});
      s.storage_align(b, 0, -2, 32, 1);
    } catch (const ScheduleError&) {
      if (!staged) return {};
      return {std::move(*staged), sch};
    }
    return {std::move(s), std::move(*staged), sch};
  }

 private:
  static int64_t constant_extent(const ir::ForNode* loop) { return *ir::as_const_int(loop->extent); }

  static std::vector<int64_t> dividing(const std::vector<int64_t>& values, int64_t extent) {
    std::vector<int64_t> out;
    for (int64_t v : values) {
      if (v >= 1 && v < extent && extent % v == 0) out.push_back(v);
    }
    return out;
  }

  static std::vector<double> uniform(size_t n) { return std::vector<double>(n, 1.0 / static_cast<double>(n)); }

  Options options_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_staged_scan_rule(ParamReader& params, const lower::Target&) {
  StagedScan::Options options;
  options.thread_extents = params.get_ints("thread_extents", {32, 64, 128});
  options.chunk_extents = params.get_ints("chunk_extents", {16, 32, 64});
  if (options.thread_extents.empty()) throw UserError("rule staged_scan: thread_extents is empty");
  if (options.chunk_extents.empty()) throw UserError("rule staged_scan: chunk_extents is empty");
  return std::make_unique<StagedScan>(std::move(options));
}

}  // namespace dragon::search
