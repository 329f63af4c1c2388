// A sketch space of given traces and postprocessors (sketch_space.h, make_trace_space).
#include <utility>

#include "dragon/search/sketch_space.h"
#include "dragon/support/error.h"

namespace dragon::search {
namespace {

// The sketch's instructions without its decisions: every replay samples afresh (as
// MetaSchedule builds its initial population from Trace(insts, {})).
schedule::Trace without_decisions(const schedule::Trace& trace) {
  schedule::Trace out;
  for (const schedule::Instruction& inst : trace.instructions()) out.append(inst);
  return out;
}

class TraceSpace final : public SketchSpace {
 public:
  TraceSpace(ir::PrimFunc func, std::vector<schedule::Trace> sketches, std::vector<Postprocessor> postprocessors)
      : func_(std::move(func)), sketches_(std::move(sketches)), postprocessors_(std::move(postprocessors)) {
    if (sketches_.empty()) throw UserError("a sketch space needs at least one sketch");
    for (schedule::Trace& t : sketches_) t = without_decisions(t.without_postproc());
  }

  const ir::PrimFunc& func() const override { return func_; }
  const std::vector<schedule::Trace>& sketches() const override { return sketches_; }

  Realized realize(const schedule::Trace& trace, int64_t seed) const override {
    Realized r;
    schedule::Schedule sch(func_, seed);
    try {
      trace.apply_to(sch, /*remove_postproc=*/true);
    } catch (const Error& e) {
      r.failure = MeasureStatus::kApplyFailed;
      r.error = e.what();
      return r;
    }
    if (!postprocessors_.empty()) {
      try {
        sch.enter_postproc();
        for (const Postprocessor& p : postprocessors_) p(sch);
      } catch (const Error& e) {
        r.failure = MeasureStatus::kRejected;
        r.error = std::string("postprocessing: ") + e.what();
        return r;
      }
    }
    r.trace = sch.trace();
    r.func = sch.func();
    return r;
  }

 private:
  ir::PrimFunc func_;
  std::vector<schedule::Trace> sketches_;
  std::vector<Postprocessor> postprocessors_;
};

}  // namespace

std::unique_ptr<SketchSpace> make_trace_space(ir::PrimFunc func, std::vector<schedule::Trace> sketches,
                                              std::vector<Postprocessor> postprocessors) {
  return std::make_unique<TraceSpace>(std::move(func), std::move(sketches), std::move(postprocessors));
}

}  // namespace dragon::search
