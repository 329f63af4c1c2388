// ChunkedScan (ours; MetaSchedule has no scan rule). Every other rule leaves a scan's
// axis to one thread per row: StagedScan spreads the rows over threads, which helps only
// when there are many. With few rows over a long axis the scan is serial: DLRM-Bench's
// lengths -> offsets, one row of 212,993, took a thousand times eager's time. This rule
// splits the axis into chunks and runs chunk_scan over them: the chunk totals (a
// reduction, which cross_thread_reduction spreads over threads when it follows), the
// carries (a scan over the chunks, as long as their number) and the scan again inside
// each chunk from its carry, whose rows are now the chunks (StagedScan's or auto_bind's
// to spread). A chunk of K makes each thread walk K elements and the carry N / K: the
// decision is K, a categorical over the parameter's values below the axis's extent. The
// carries are one scan a row over N / K chunks, each step a load of a total; a fork
// chunks them in turn at a sampled chunk (carry_chunk_extents), and measurement decides.
// Applies to a scan (one ordered variable fed by the innermost loop alone; the others
// spatial, fed by the other loops; serial, constant, unbound loops) with at most max_rows
// rows over an axis of at least min_scan_extent.
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

class ChunkedScan : public ScheduleRule {
 public:
  struct Options {
    std::vector<int64_t> chunk_extents;
    std::vector<int64_t> carry_chunk_extents;  // empty: the carries stay one scan
    int64_t max_rows = 0;
    int64_t min_scan_extent = 0;
  };
  explicit ChunkedScan(Options options) : options_(std::move(options)) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    std::optional<BlockSite> site = find_block(sch.func(), block);
    if (!site || !is_unscheduled_scan(*site)) return {};
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < site->loops.size(); ++i) rows *= *ir::as_const_int(site->loops[i]->extent);
    const int64_t extent = *ir::as_const_int(site->loops.back()->extent);
    if (rows > options_.max_rows || extent < options_.min_scan_extent) return {};
    std::vector<int64_t> chunks;
    for (int64_t k : options_.chunk_extents) {
      if (k > 1 && k < extent) chunks.push_back(k);
    }
    if (chunks.empty()) return {};
    Schedule s = sch.copy();
    BlockRV b = s.get_block(block);
    LoopRV scan = s.get_loops(b).back();
    const std::vector<double> uniform(chunks.size(), 1.0 / static_cast<double>(chunks.size()));
    ExprRV chunk = s.sample_categorical(chunks, uniform);
    std::vector<LoopRV> parts = s.split(scan, {schedule::None{}, chunk});
    const std::string total = s.get(s.chunk_scan(parts[0]))->name;
    std::vector<Schedule> out;
    // The carries walk the chunks in one thread a row, each step a load of a chunk's
    // total: a fork chunks them too (a second level), and measurement decides.
    if (!options_.carry_chunk_extents.empty()) {
      Schedule nested = s.copy();
      try {
        BlockRV carry = nested.get_consumers(nested.get_block(total)).at(0);
        const std::vector<int64_t>& extents = options_.carry_chunk_extents;
        const std::vector<double> even(extents.size(), 1.0 / static_cast<double>(extents.size()));
        ExprRV carry_chunk = nested.sample_categorical(extents, even);
        nested.chunk_scan(nested.split(nested.get_loops(carry).back(), {schedule::None{}, carry_chunk})[0]);
        out.push_back(std::move(nested));
      } catch (const schedule::ScheduleError&) {
        // The carries stay one scan.
      }
    }
    out.push_back(std::move(s));
    return out;
  }

 private:
  Options options_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_chunked_scan_rule(ParamReader& params, const lower::Target&) {
  ChunkedScan::Options options;
  options.chunk_extents = params.get_ints("chunk_extents", {256, 512, 1024, 2048});
  options.carry_chunk_extents = params.get_ints("carry_chunk_extents", {16, 32, 64});
  options.max_rows = params.get_int("max_rows", 256);
  options.min_scan_extent = params.get_int("min_scan_extent", 8192);
  if (options.chunk_extents.empty()) throw UserError("rule chunked_scan: chunk_extents is empty");
  if (options.max_rows < 1) throw UserError("rule chunked_scan: max_rows must be at least 1");
  return std::make_unique<ChunkedScan>(std::move(options));
}

}  // namespace dragon::search
