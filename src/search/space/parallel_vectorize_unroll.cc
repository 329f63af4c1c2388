// ParallelizeVectorizeUnroll (MetaSchedule's rule): on the root block, the annotations the
// postprocessor rewrite_parallel_vectorize_unroll turns into loop kinds: on the CPU the
// parallel and vector extents, and everywhere a sampled unroll step (unroll_explicit or
// unroll_implicit), the decision MutateUnroll changes. With sample_serial (the CPU set) the
// parallel extent is itself a decision, 1 (serial) or max_parallel_extent: whether threads
// pay depends on the host (on a 2-core machine shared with other work every parallel
// region waits for a scheduler tick), so the search measures both.
#include "dragon/support/error.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::Schedule;

class ParallelizeVectorizeUnroll : public ScheduleRule {
 public:
  ParallelizeVectorizeUnroll(int64_t max_parallel_extent, bool sample_serial, int64_t max_vectorize_extent,
                             std::vector<int64_t> unroll_steps, bool unroll_explicit)
      : max_parallel_extent_(max_parallel_extent),
        sample_serial_(sample_serial),
        max_vectorize_extent_(max_vectorize_extent),
        unroll_steps_(std::move(unroll_steps)),
        unroll_explicit_(unroll_explicit) {}

  std::vector<Schedule> apply(const Schedule& sch, const std::string& block) const override {
    if (block != "root") return {};
    Schedule s = sch.copy();
    BlockRV root = s.get_block("root");
    if (max_parallel_extent_ > 1 && sample_serial_) {
      schedule::ExprRV extent = s.sample_categorical({1, max_parallel_extent_}, {0.5, 0.5});
      s.annotate(root, "meta_schedule.parallel", extent);
    } else if (max_parallel_extent_ > 0) {
      s.annotate(root, "meta_schedule.parallel", max_parallel_extent_);
    }
    if (max_vectorize_extent_ > 0) s.annotate(root, "meta_schedule.vectorize", max_vectorize_extent_);
    if (!unroll_steps_.empty()) {
      schedule::ExprRV step =
          s.sample_categorical(unroll_steps_, std::vector<double>(unroll_steps_.size(), 1.0 / unroll_steps_.size()));
      s.annotate(root, unroll_explicit_ ? "meta_schedule.unroll_explicit" : "meta_schedule.unroll_implicit", step);
    }
    return {s};
  }

 private:
  int64_t max_parallel_extent_;
  bool sample_serial_;
  int64_t max_vectorize_extent_;
  std::vector<int64_t> unroll_steps_;
  bool unroll_explicit_;
};

}  // namespace

std::unique_ptr<ScheduleRule> make_parallel_vectorize_unroll_rule(ParamReader& params, const lower::Target& target) {
  bool gpu = target.is_gpu();
  // CPU: TVM's 16 jobs per core; the core count is a parameter so traces do not depend on
  // the machine that made them (64 = 16 x 4 cores).
  int64_t max_parallel_extent = params.get_int("max_parallel_extent", gpu ? 0 : 64);
  bool sample_serial = params.get_bool("sample_serial", false);
  int64_t max_vectorize_extent = params.get_int("max_vectorize_extent", gpu ? 0 : 64);
  std::vector<int64_t> steps =
      params.get_ints("unroll_max_steps", gpu ? std::vector<int64_t>{0, 16, 64, 512, 1024} : std::vector<int64_t>{0, 16, 64, 512});
  bool unroll_explicit = params.get_bool("unroll_explicit", true);
  for (int64_t step : steps) {
    if (step < 0) throw UserError("rule parallel_vectorize_unroll: unroll_max_steps must be >= 0");
  }
  return std::make_unique<ParallelizeVectorizeUnroll>(max_parallel_extent, sample_serial, max_vectorize_extent,
                                                      std::move(steps), unroll_explicit);
}

}  // namespace dragon::search
