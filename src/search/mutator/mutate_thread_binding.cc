// MutateThreadBinding: redraws a sampled thread count (the design space's kThreadExtent
// sites: v = SampleCategorical; Split(l, ..., v, ...) whose loop for the factor v is bound
// to threadIdx: MetaSchedule's [None, v], and AutoBind's [None, blocks, v] for large extents).
#include <memory>

#include "dragon/search/mutator.h"
#include "trace_queries.h"

namespace dragon::search {
namespace {

using namespace mutator_detail;
using schedule::Trace;

class MutateThreadBinding final : public Mutator {
 public:
  std::string_view name() const override { return "mutate_thread_binding"; }

  std::optional<Trace> apply(const Trace& trace, const ir::PrimFunc&, schedule::RandomEngine& rng) const override {
    std::vector<size_t> counts = decided_sites(trace, {SamplingRole::kThreadExtent});
    while (!counts.empty()) {
      size_t slot = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(counts.size())));
      if (std::optional<int64_t> redrawn = redraw_categorical(trace, counts[slot], rng)) {
        return trace.with_decision(counts[slot], schedule::Arg(*redrawn));
      }
      counts.erase(counts.begin() + static_cast<std::ptrdiff_t>(slot));
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_mutate_thread_binding() { return std::make_unique<MutateThreadBinding>(); }

}  // namespace dragon::search
