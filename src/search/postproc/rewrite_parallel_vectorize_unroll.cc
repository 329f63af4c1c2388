// RewriteParallelVectorizeUnroll (MetaSchedule's postprocessor): the root block's
// annotations from the parallel_vectorize_unroll rule become loop kinds. On the CPU,
// "meta_schedule.parallel" = P fuses each top-level nest's outer data-parallel loops until
// their extent reaches P and runs them in parallel, and "meta_schedule.vectorize" = V
// vectorizes a block's innermost data-parallel loop (split to at most V lanes first when
// longer); the unroll step is RewriteUnroll's (rewrite_unroll.h). The annotations are
// removed.
#include <algorithm>
#include <set>
#include <variant>

#include "dragon/ir/op.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/search/rewrite_unroll.h"
#include "postproc/postproc.h"
#include "space/block_analysis.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;

constexpr const char* kParallel = "meta_schedule.parallel";
constexpr const char* kVectorize = "meta_schedule.vectorize";

std::optional<int64_t> root_annotation(const Schedule& sch, const char* key) {
  const ir::BlockNode* root = sch.func().root_block();
  if (root == nullptr) return std::nullopt;
  auto it = root->annotations.find(key);
  if (it == root->annotations.end()) return std::nullopt;
  const auto* value = std::get_if<int64_t>(&it->second);
  return value != nullptr ? std::optional<int64_t>(*value) : std::nullopt;
}

bool plain_data_parallel(const ir::ForNode* loop) {
  return loop->for_kind == ir::ForKind::kSerial && loop->annotations.empty() && ir::is_const_int(loop->min, 0) &&
         ir::as_const_int(loop->extent).has_value() && loop_feeds(loop).only_spatial();
}

// Fuses the outer data-parallel loops of the nest holding `block` (each the only child
// of the previous) until their extent reaches `max_extent`, and parallelizes them.
void parallelize(Schedule& sch, const std::string& block, int64_t max_extent) {
  std::optional<BlockSite> site = find_block(sch.func(), block);
  if (!site || site->loops.empty()) return;
  size_t count = 0;
  int64_t extent = 1;
  for (size_t i = 0; i < site->loops.size() && extent < max_extent; ++i) {
    const ir::ForNode* f = site->loops[i];
    if (i > 0 && site->loops[i - 1]->body.get() != static_cast<const ir::StmtNode*>(f)) break;
    if (!plain_data_parallel(f)) break;
    extent *= *ir::as_const_int(f->extent);
    count = i + 1;
  }
  if (count == 0) return;
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(block));
  std::vector<LoopRV> outer(loops.begin(), loops.begin() + static_cast<std::ptrdiff_t>(count));
  LoopRV fused = outer.size() == 1 ? outer[0] : sch.fuse(outer);
  sch.parallel(fused);
}

// The largest divisor of `extent` in [2, max_extent], or 1 when there is none.
int64_t largest_divisor_at_most(int64_t extent, int64_t max_extent) {
  for (int64_t d = std::min(extent, max_extent); d >= 2; --d) {
    if (extent % d == 0) return d;
  }
  return 1;
}

// Vectorizes the innermost loop of the nest holding `block` when it is data parallel.
// A loop longer than `max_extent` (a row of 2048 elements) is split first, [rest, the
// largest divisor of its extent up to max_extent], and the inner part vectorized: without
// the split no element-wise block over a long row would ever vectorize.
void vectorize(Schedule& sch, const std::string& block, int64_t max_extent) {
  std::optional<BlockSite> site = find_block(sch.func(), block);
  if (!site || site->loops.empty()) return;
  const ir::ForNode* inner = site->loops.back();
  std::optional<int64_t> extent = ir::as_const_int(inner->extent);
  if (!plain_data_parallel(inner) || !extent || *extent <= 1) return;
  if (inner->body.as<ir::BlockRealizeNode>() == nullptr) return;
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block(block));
  if (*extent <= max_extent) {
    sch.vectorize(loops.back());
    return;
  }
  int64_t lanes = largest_divisor_at_most(*extent, max_extent);
  if (lanes < 2) return;
  std::vector<LoopRV> parts = sch.split(loops.back(), {schedule::None{}, lanes});
  sch.vectorize(parts.back());
}

class RewriteParallelVectorizeUnroll : public Postproc {
 public:
  std::optional<std::string> apply(Schedule& sch) const override {
    std::optional<int64_t> parallel = root_annotation(sch, kParallel);
    std::optional<int64_t> vector = root_annotation(sch, kVectorize);
    if (parallel || vector) {
      BlockRV root = sch.get_block("root");
      std::vector<std::string> names;
      for (BlockRV b : sch.get_child_blocks(root)) names.push_back(sch.get(b)->name);
      for (const std::string& name : names) {
        // A primitive that refuses leaves the nest as it was: the annotation is a hint.
        if (parallel && *parallel > 1) {
          try {
            parallelize(sch, name, *parallel);
          } catch (const schedule::ScheduleError&) {
          }
        }
      }
      for (const std::string& name : block_names(sch.func())) {
        if (vector && *vector > 1) {
          try {
            vectorize(sch, name, *vector);
          } catch (const schedule::ScheduleError&) {
          }
        }
      }
      if (parallel) sch.unannotate(root, kParallel);
      if (vector) sch.unannotate(root, kVectorize);
    }
    rewrite_unroll(sch);
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Postproc> make_rewrite_parallel_vectorize_unroll_postproc(ParamReader&, const lower::Target&) {
  return std::make_unique<RewriteParallelVectorizeUnroll>();
}

}  // namespace dragon::search
