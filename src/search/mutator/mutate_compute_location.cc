// MutateComputeLocation: moves one block elsewhere. The valid locations depend on the
// program at that point, so the trace is replayed up to the SampleComputeLocation; each
// location index is then tried on a copy of that schedule, and the sampler's own repair
// (an invalid index becomes the nearest valid one below it) lists the valid ones.
#include <algorithm>
#include <memory>
#include <set>

#include "dragon/ir/functor.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/mutator.h"
#include "trace_queries.h"

namespace dragon::search {
namespace {

using namespace mutator_detail;
using schedule::Arg;
using schedule::Schedule;
using schedule::Trace;

// The deepest loop nest of `func`: no location index reaches past it.
int64_t loop_depth(const ir::PrimFunc& func) {
  struct Depth : ir::StmtVisitor {
    int64_t current = 0, deepest = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      ++current;
      deepest = std::max(deepest, current);
      ir::StmtVisitor::visit_(op);
      --current;
    }
  } d;
  d.visit(func->body);
  return d.deepest;
}

// The trace's instructions [0, end) with their decisions.
Trace prefix(const Trace& trace, size_t end) {
  Trace out;
  for (size_t i = 0; i < end; ++i) out.append(trace[i], trace.decision(i));
  return out;
}

// The valid decisions of the SampleComputeLocation at `index`, increasing; empty when the
// prefix does not replay.
std::vector<int64_t> valid_locations(const Trace& trace, size_t index, const ir::PrimFunc& func) {
  Schedule sch(func);
  try {
    prefix(trace, index + 1).apply_to(sch);
  } catch (const Error&) {
    return {};
  }
  const auto* block = sch.trace()[index].inputs.at(0).as<schedule::RandomVar>();
  if (block == nullptr) return {};
  std::set<int64_t> found;
  const int64_t depth = loop_depth(sch.func());
  for (int64_t d = -2; d < depth; ++d) {
    Schedule trial = sch.copy();
    try {
      trial.sample_compute_location(schedule::BlockRV{block->id}, d);
    } catch (const Error&) {
      continue;
    }
    std::optional<Arg> chosen = trial.trace().decision(trial.trace().size() - 1);
    if (chosen && chosen->as<int64_t>()) found.insert(*chosen->as<int64_t>());
  }
  return {found.begin(), found.end()};
}

class MutateComputeLocation final : public Mutator {
 public:
  std::string_view name() const override { return "mutate_compute_location"; }

  std::optional<Trace> apply(const Trace& trace, const ir::PrimFunc& func,
                             schedule::RandomEngine& rng) const override {
    std::vector<size_t> samples = decided_sites(trace, {SamplingRole::kComputeLocation});
    while (!samples.empty()) {
      size_t slot = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(samples.size())));
      size_t index = samples[slot];
      std::optional<Arg> current = trace.decision(index);
      std::vector<int64_t> others;
      for (int64_t location : valid_locations(trace, index, func)) {
        if (!current || current->as<int64_t>() == nullptr || location != *current->as<int64_t>()) others.push_back(location);
      }
      if (!others.empty()) return trace.with_decision(index, Arg(pick(others, rng)));
      samples.erase(samples.begin() + static_cast<std::ptrdiff_t>(slot));
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_mutate_compute_location() { return std::make_unique<MutateComputeLocation>(); }

}  // namespace dragon::search
