// MutateUnroll: redraws the unroll depth a design space sampled for a block
// (SampleCategorical -> Annotate "meta_schedule.unroll_explicit" / "_implicit").
#include <memory>

#include "dragon/search/mutator.h"
#include "trace_queries.h"

namespace dragon::search {
namespace {

using namespace mutator_detail;
using schedule::Trace;

class MutateUnroll final : public Mutator {
 public:
  std::string_view name() const override { return "mutate_unroll"; }

  std::optional<Trace> apply(const Trace& trace, const ir::PrimFunc&, schedule::RandomEngine& rng) const override {
    std::vector<size_t> unrolls = decided_sites(trace, {SamplingRole::kUnroll});
    while (!unrolls.empty()) {
      size_t slot = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(unrolls.size())));
      if (std::optional<int64_t> redrawn = redraw_categorical(trace, unrolls[slot], rng)) {
        return trace.with_decision(unrolls[slot], schedule::Arg(*redrawn));
      }
      unrolls.erase(unrolls.begin() + static_cast<std::ptrdiff_t>(slot));
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_mutate_unroll() { return std::make_unique<MutateUnroll>(); }

}  // namespace dragon::search
