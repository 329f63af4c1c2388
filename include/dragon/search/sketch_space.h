// What evolutionary search needs from a design space: the task's sketches (traces whose
// sampling instructions may lack decisions) and a way to turn a trace into a candidate
// program: replay it on the unscheduled function (missing decisions drawn from a seed),
// then run the postprocessors. A trace that does not replay or a program a postprocessor
// refuses is a typed failure, never an exception. The design-space rules provide one
// (design_space.h); make_trace_space builds one from given sketches (expert sketches,
// tests). Not the search itself (evolutionary_search.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/measure_result.h"

namespace dragon::search {

// A candidate program, or why there is none: kApplyFailed (a precondition failed on
// replay) or kRejected (a postprocessor refused it).
struct Realized {
  std::optional<schedule::Trace> trace;  // the whole trace, postprocessing included
  ir::PrimFunc func;                     // the scheduled function it replays to
  MeasureStatus failure = MeasureStatus::kApplyFailed;
  std::string error;
  bool ok() const { return trace.has_value(); }
};

class SketchSpace {
 public:
  virtual ~SketchSpace() = default;
  virtual const ir::PrimFunc& func() const = 0;
  // Traces up to (not including) EnterPostproc; at least one.
  virtual const std::vector<schedule::Trace>& sketches() const = 0;
  // `trace` (a sketch, a mutated trace or a stored record's trace; postprocessing, if any,
  // is dropped and redone) replayed on func() with missing decisions drawn from `seed`,
  // then postprocessed. Safe to call from several threads at once.
  virtual Realized realize(const schedule::Trace& trace, int64_t seed) const = 0;
  // A fresh candidate of sketch `index` (of sketches()), its decisions drawn from `seed`.
  // By default realize() of the sketch; the rule space draws decisions that fit the
  // target's limits instead (postproc.h, SketchSampler). Safe from several threads.
  virtual Realized sample(size_t index, int64_t seed) const { return realize(sketches().at(index), seed); }
};

// A postprocessor: changes the schedule through its primitives (so the trace records it)
// or refuses the program by throwing ScheduleError or UserError.
using Postprocessor = std::function<void(schedule::Schedule&)>;

// A space of the given sketches; realize() replays, marks EnterPostproc when there are
// postprocessors, and runs them in order.
std::unique_ptr<SketchSpace> make_trace_space(ir::PrimFunc func, std::vector<schedule::Trace> sketches,
                                              std::vector<Postprocessor> postprocessors = {});

}  // namespace dragon::search
