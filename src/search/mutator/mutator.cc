// The default mutator sets and the draw among them (mutator.h).
#include "dragon/search/mutator.h"

namespace dragon::search {

std::vector<WeightedMutator> default_mutators(const lower::Target& target) {
  if (target.is_gpu()) {
    return {{make_mutate_tile_size(), 0.9}, {make_mutate_unroll(), 0.08}, {make_mutate_thread_binding(), 0.02}};
  }
  return {{make_mutate_tile_size(), 0.92}, {make_mutate_unroll(), 0.03}, {make_mutate_compute_location(), 0.05}};
}

std::optional<schedule::Trace> mutate(const schedule::Trace& trace, const ir::PrimFunc& func,
                                      const std::vector<WeightedMutator>& mutators, schedule::RandomEngine& rng) {
  std::vector<double> weights;
  for (const WeightedMutator& m : mutators) weights.push_back(m.probability > 0 ? m.probability : 0);
  for (size_t tries = 0; tries < mutators.size(); ++tries) {
    double total = 0;
    for (double w : weights) total += w;
    if (!(total > 0)) break;
    size_t chosen = static_cast<size_t>(rng.categorical(weights));
    if (std::optional<schedule::Trace> t = mutators[chosen].mutator->apply(trace, func, rng)) return t;
    weights[chosen] = 0;  // nothing to change for this one: draw among the others
  }
  return std::nullopt;
}

}  // namespace dragon::search
