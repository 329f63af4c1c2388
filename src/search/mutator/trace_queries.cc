// Trace queries for the mutators (trace_queries.h).
#include "trace_queries.h"

#include <algorithm>

namespace dragon::search::mutator_detail {

using schedule::Arg;

std::vector<size_t> decided_sites(const schedule::Trace& trace, std::initializer_list<SamplingRole> roles) {
  std::vector<size_t> found;
  for (const SamplingSite& site : sampling_sites(trace)) {
    if (std::find(roles.begin(), roles.end(), site.role) == roles.end()) continue;
    if (trace.decision(site.instruction).has_value()) found.push_back(site.instruction);
  }
  return found;
}

std::optional<std::vector<int64_t>> int_list_decision(const Arg& decision) {
  const auto* list = decision.as<Arg::List>();
  if (list == nullptr) return std::nullopt;
  std::vector<int64_t> values;
  for (const Arg& a : *list) {
    const auto* v = a.as<int64_t>();
    if (v == nullptr) return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

std::optional<int64_t> redraw_categorical(const schedule::Trace& trace, size_t index, schedule::RandomEngine& rng) {
  const schedule::Instruction& inst = trace[index];
  std::optional<Arg> decision = trace.decision(index);
  if (!decision || inst.attrs.size() != 2) return std::nullopt;
  const auto* current = decision->as<int64_t>();
  const auto* probs = inst.attrs[1].as<Arg::List>();
  if (current == nullptr || probs == nullptr) return std::nullopt;
  std::vector<double> weights;
  double total = 0;
  for (size_t i = 0; i < probs->size(); ++i) {
    double w = 0;
    if (const auto* d = (*probs)[i].as<double>()) w = *d;
    if (const auto* n = (*probs)[i].as<int64_t>()) w = static_cast<double>(*n);
    if (static_cast<int64_t>(i) == *current || !(w > 0)) w = 0;
    weights.push_back(w);
    total += w;
  }
  if (!(total > 0)) return std::nullopt;
  return rng.categorical(weights);
}

}  // namespace dragon::search::mutator_detail
