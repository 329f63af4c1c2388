// Evolutionary search (evolutionary_search.h). One propose() is MetaSchedule's iteration:
// population = best measured + fresh samples; genetic_num_iters generations scored by the
// cost model; the best-scored unmeasured programs (each sketch still worth exploring
// keeping a few slots: sketch_quota.h) plus an epsilon share of random fresh ones.
// Replays run on several threads; every random draw is made on this thread first, so a
// seed gives the same batches whatever the thread count.
#include "dragon/search/evolutionary_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "dragon/ir/structural_hash.h"
#include "dragon/search/thread_cpu_time.h"
#include "parallel_for.h"

namespace dragon::search {
namespace {

using Clock = std::chrono::steady_clock;

// An index drawn in proportion to `scores` (negative ones count as 0; uniform when all are 0).
size_t draw_parent(const std::vector<double>& scores, schedule::RandomEngine& rng) {
  std::vector<double> weights;
  double total = 0;
  for (double s : scores) {
    double w = std::isfinite(s) && s > 0 ? s : 0;
    weights.push_back(w);
    total += w;
  }
  if (!(total > 0)) return static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(scores.size())));
  return static_cast<size_t>(rng.categorical(weights));
}

}  // namespace

uint64_t sketch_key(const schedule::Trace& trace) {
  // One line per instruction without its decision (the Trace appends those separately).
  const std::optional<size_t> end = trace.postproc_start();
  const size_t n = end ? *end : trace.size();
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    text += schedule::to_string(trace[i]);
    text += '\n';
  }
  return std::hash<std::string>{}(text);
}

EvolutionarySearch::EvolutionarySearch(const SketchSpace& space, lower::Target target, std::string workload,
                                       CostModel& model, std::vector<WeightedMutator> mutators,
                                       EvolutionarySearchOptions options)
    : space_(space),
      target_(std::move(target)),
      workload_(std::move(workload)),
      model_(model),
      mutators_(std::move(mutators)),
      options_(options),
      rng_(options.seed) {}

std::optional<SearchCandidate> EvolutionarySearch::realize(const schedule::Trace& trace, int64_t seed,
                                                           double& seconds) const {
  return timed_candidate([&] { return space_.realize(trace, seed); }, seconds);
}

std::optional<SearchCandidate> EvolutionarySearch::sample(size_t sketch, int64_t seed, double& seconds) const {
  return timed_candidate([&] { return space_.sample(sketch, seed); }, seconds);
}

std::optional<SearchCandidate> EvolutionarySearch::timed_candidate(const std::function<Realized()>& make,
                                                                   double& seconds) {
  const double start = thread_cpu_seconds();
  Realized r = make();
  std::optional<SearchCandidate> c;
  if (r.ok()) {
    c.emplace();
    c->trace = std::move(*r.trace);
    c->scheduled = r.func;
    c->hash = ir::structural_hash(c->scheduled);
    c->sketch = sketch_key(c->trace);
  }
  seconds += thread_cpu_seconds() - start;
  return c;
}

void EvolutionarySearch::count_realized(const std::vector<double>& seconds) {
  for (double s : seconds) statistics_.realize_seconds += s;
}

int64_t EvolutionarySearch::add_measured(const std::vector<MeasuredTrace>& records) {
  std::vector<std::optional<SearchCandidate>> replayed(records.size());
  std::vector<double> seconds(records.size(), 0);
  parallel_for(records.size(), options_.threads, [&](size_t i) { replayed[i] = realize(records[i].trace, 1, seconds[i]); });
  count_realized(seconds);
  statistics_.realized += static_cast<int64_t>(records.size());
  std::vector<SearchCandidate> candidates;
  std::vector<std::optional<double>> latencies;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!replayed[i]) continue;
    candidates.push_back(std::move(*replayed[i]));
    latencies.push_back(records[i].latency_ms);
  }
  learn(candidates, latencies);
  return static_cast<int64_t>(candidates.size());
}

int64_t EvolutionarySearch::add_seeds(const std::vector<schedule::Trace>& traces) {
  std::vector<std::optional<SearchCandidate>> replayed(traces.size());
  std::vector<double> seconds(traces.size(), 0);
  std::vector<int64_t> seeds;
  for (size_t i = 0; i < traces.size(); ++i) seeds.push_back(next_seed());
  parallel_for(traces.size(), options_.threads,
               [&](size_t i) { replayed[i] = realize(traces[i].without_postproc(), seeds[i], seconds[i]); });
  count_realized(seconds);
  statistics_.realized += static_cast<int64_t>(traces.size());
  int64_t added = 0;
  std::unordered_set<uint64_t> seen;
  for (const SearchCandidate& c : seeds_) seen.insert(c.hash);
  for (std::optional<SearchCandidate>& c : replayed) {
    if (!c || measured_hashes_.count(c->hash) || !seen.insert(c->hash).second) continue;
    seeds_.push_back(std::move(*c));
    ++added;
  }
  return added;
}

void EvolutionarySearch::learn(const std::vector<SearchCandidate>& candidates,
                               const std::vector<std::optional<double>>& latencies_ms) {
  extract_features(candidates);
  std::vector<FeaturizedCandidate> measured;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const SearchCandidate& c = candidates[i];
    const std::optional<double>& ms = latencies_ms[i];
    measured_hashes_.insert(c.hash);
    SketchStanding& standing = standing_[c.sketch];
    ++standing.measured;
    if (ms && (!standing.best_ms || *ms < *standing.best_ms)) standing.best_ms = ms;
    FeaturizedCandidate f = features_.at(c.hash);
    f.latency_s = ms ? std::optional<double>(*ms / 1000) : std::nullopt;
    measured.push_back(std::move(f));
    if (!ms) continue;
    if (!best_ms_ || *ms < *best_ms_) {
      best_ms_ = ms;
      best_ = c;
    }
    auto at = std::lower_bound(measured_ok_.begin(), measured_ok_.end(), *ms,
                               [](const auto& entry, double v) { return entry.first < v; });
    measured_ok_.insert(at, {*ms, c});
  }
  if (!measured.empty()) model_.update(measured);
}

std::vector<SearchCandidate> EvolutionarySearch::best_measured(int count) const {
  // The fastest program of each sketch first, so every sketch measured has a parent in the
  // population (else the first sketch's programs fill it), then the fastest of the rest.
  std::vector<SearchCandidate> out;
  std::vector<bool> taken(measured_ok_.size(), false);
  std::unordered_set<uint64_t> sketches;
  for (size_t i = 0; i < measured_ok_.size() && static_cast<int>(out.size()) < count; ++i) {
    if (!sketches.insert(measured_ok_[i].second.sketch).second) continue;
    taken[i] = true;
    out.push_back(measured_ok_[i].second);
  }
  for (size_t i = 0; i < measured_ok_.size() && static_cast<int>(out.size()) < count; ++i) {
    if (!taken[i]) out.push_back(measured_ok_[i].second);
  }
  return out;
}

std::vector<SearchCandidate> EvolutionarySearch::sample_fresh(int count) {
  std::vector<SearchCandidate> fresh;
  std::unordered_set<uint64_t> seen;
  const auto& sketches = space_.sketches();
  int failures = 0;
  while (static_cast<int>(fresh.size()) < count && failures < options_.max_fail_count) {
    const size_t batch = static_cast<size_t>(count - static_cast<int>(fresh.size()));
    std::vector<std::pair<size_t, int64_t>> draws;  // (sketch, seed)
    for (size_t i = 0; i < batch; ++i) {
      draws.emplace_back(static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(sketches.size()))), next_seed());
    }
    std::vector<std::optional<SearchCandidate>> made(batch);
    std::vector<double> seconds(batch, 0);
    parallel_for(batch, options_.threads,
                 [&](size_t i) { made[i] = sample(draws[i].first, draws[i].second, seconds[i]); });
    count_realized(seconds);
    statistics_.realized += static_cast<int64_t>(batch);
    size_t added = 0;
    for (std::optional<SearchCandidate>& c : made) {
      if (!c) {
        ++statistics_.sample_failures;
        continue;
      }
      ++statistics_.sampled;
      if (measured_hashes_.count(c->hash) || !seen.insert(c->hash).second) continue;
      fresh.push_back(std::move(*c));
      ++added;
    }
    if (added == 0) ++failures;
    // MetaSchedule stops once it has init_min_unmeasured fresh programs.
    if (static_cast<int>(fresh.size()) >= options_.init_min_unmeasured) break;
  }
  return fresh;
}

void EvolutionarySearch::extract_features(const std::vector<SearchCandidate>& candidates) {
  // The programs not seen before, extracted together (on the model's threads).
  std::vector<Candidate> missing;
  std::unordered_set<uint64_t> missing_hashes;
  std::vector<uint64_t> order;
  for (const SearchCandidate& c : candidates) {
    if (features_.count(c.hash) || !missing_hashes.insert(c.hash).second) continue;
    missing.push_back(Candidate{c.scheduled, workload_, target_});
    order.push_back(c.hash);
  }
  if (missing.empty()) return;
  std::vector<FeaturizedCandidate> f = featurize(missing, options_.threads);
  for (size_t i = 0; i < f.size(); ++i) features_.emplace(order[i], std::move(f[i]));
}

std::vector<double> EvolutionarySearch::score(const std::vector<SearchCandidate>& candidates) {
  extract_features(candidates);
  std::vector<FeaturizedCandidate> rows;
  rows.reserve(candidates.size());
  for (const SearchCandidate& c : candidates) rows.push_back(features_.at(c.hash));
  return model_.predict(rows);
}

std::vector<SearchCandidate> EvolutionarySearch::evolve(std::vector<SearchCandidate> population, int wanted) {
  // The best-scored unmeasured programs seen in any generation, by hash.
  std::map<uint64_t, Scored> best;
  auto keep_best = [&](const std::vector<SearchCandidate>& generation, const std::vector<double>& scores) {
    for (size_t i = 0; i < generation.size(); ++i) {
      if (measured_hashes_.count(generation[i].hash)) continue;
      auto [it, inserted] = best.emplace(generation[i].hash, Scored{generation[i], scores[i]});
      if (!inserted) it->second.score = std::max(it->second.score, scores[i]);
    }
  };
  for (int generation = 0; generation < options_.genetic_num_iters && !population.empty(); ++generation) {
    std::vector<double> scores = score(population);
    keep_best(population, scores);
    // Children: parents drawn by score; mutated with genetic_mutate_prob (a few tries),
    // otherwise (or when no mutation replays) the parent itself.
    struct Plan {
      size_t parent;
      bool mutate;
      std::vector<int64_t> seeds;
    };
    std::vector<Plan> plans;
    for (size_t i = 0; i < population.size(); ++i) {
      Plan p{draw_parent(scores, rng_), rng_.uniform_real() < options_.genetic_mutate_prob, {}};
      if (p.mutate) {
        for (int t = 0; t < options_.genetic_max_fail_count; ++t) p.seeds.push_back(next_seed());
      }
      plans.push_back(std::move(p));
    }
    std::vector<std::optional<SearchCandidate>> children(plans.size());
    std::vector<int> failures(plans.size(), 0);
    std::vector<double> seconds(plans.size(), 0);
    parallel_for(plans.size(), options_.threads, [&](size_t i) {
      const SearchCandidate& parent = population[plans[i].parent];
      for (int64_t seed : plans[i].seeds) {
        schedule::RandomEngine local(seed);
        std::optional<schedule::Trace> mutated = mutate(parent.trace, space_.func(), mutators_, local);
        if (!mutated) break;  // nothing in this parent can change
        if ((children[i] = realize(*mutated, local.fork_seed(), seconds[i]))) return;
        ++failures[i];
      }
    });
    count_realized(seconds);
    std::vector<SearchCandidate> next;
    for (size_t i = 0; i < plans.size(); ++i) {
      statistics_.mutation_failures += failures[i];
      statistics_.realized += failures[i] + (children[i] ? 1 : 0);
      if (children[i]) {
        ++statistics_.mutated;
        next.push_back(std::move(*children[i]));
      } else {
        next.push_back(population[plans[i].parent]);
      }
    }
    population = std::move(next);
  }
  if (!population.empty()) keep_best(population, score(population));
  std::vector<Scored> ranked;
  for (auto& [hash, s] : best) ranked.push_back(std::move(s));
  std::stable_sort(ranked.begin(), ranked.end(), [](const Scored& a, const Scored& b) { return a.score > b.score; });
  std::vector<SearchCandidate> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < wanted; ++i) {
    out.push_back(std::move(ranked[i].candidate));
  }
  return out;
}

std::vector<SearchCandidate> EvolutionarySearch::propose(int count) {
  Clock::time_point start = Clock::now();
  std::vector<SearchCandidate> out;
  if (count <= 0) return out;
  // Transferred programs first, a share of the batch (the rest wait for the next one).
  std::unordered_set<uint64_t> taken;
  const int seed_slots = std::max(1, static_cast<int>(std::floor(count * options_.seed_share)));
  while (!seeds_.empty() && static_cast<int>(out.size()) < seed_slots) {
    SearchCandidate c = std::move(seeds_.front());
    seeds_.erase(seeds_.begin());
    if (measured_hashes_.count(c.hash) || !taken.insert(c.hash).second) continue;
    out.push_back(std::move(c));
    ++statistics_.seeded;
  }
  const int from_measured = static_cast<int>(options_.population * options_.init_measured_ratio);
  std::vector<SearchCandidate> population = best_measured(from_measured);
  std::vector<SearchCandidate> fresh =
      sample_fresh(std::max(options_.population - static_cast<int>(population.size()), 1));
  population.insert(population.end(), fresh.begin(), fresh.end());

  const int random_share = static_cast<int>(std::lround(count * options_.eps_greedy));
  // A deeper ranking than the batch needs, so each sketch's quota finds its best-ranked.
  const int from_model = std::max(0, count - random_share - static_cast<int>(out.size()));
  std::vector<SearchCandidate> ranked = evolve(std::move(population), 4 * std::max(from_model, 1));
  std::vector<uint64_t> ranked_sketches;
  for (const SearchCandidate& c : ranked) ranked_sketches.push_back(c.sketch);
  for (size_t i : pick_with_sketch_quotas(ranked_sketches, standing_, from_model, options_.sketch_quotas)) {
    if (!taken.insert(ranked[i].hash).second) continue;
    out.push_back(std::move(ranked[i]));
  }
  // The random share, and whatever the model's ranking could not fill, from the fresh samples.
  std::vector<int64_t> order = rng_.sample_without_replacement(static_cast<int64_t>(fresh.size()),
                                                               static_cast<int64_t>(fresh.size()));
  for (int64_t i : order) {
    if (static_cast<int>(out.size()) >= count) break;
    SearchCandidate& c = fresh[static_cast<size_t>(i)];
    if (taken.count(c.hash) || measured_hashes_.count(c.hash)) continue;
    taken.insert(c.hash);
    out.push_back(std::move(c));
  }
  for (const SearchCandidate& c : out) measured_hashes_.insert(c.hash);
  statistics_.proposed += static_cast<int64_t>(out.size());
  statistics_.seconds += std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

void EvolutionarySearch::report(const std::vector<SearchCandidate>& candidates,
                                const std::vector<MeasureResult>& results) {
  std::vector<std::optional<double>> latencies;
  for (size_t i = 0; i < candidates.size(); ++i) {
    latencies.push_back(i < results.size() ? results[i].median_ms() : std::nullopt);
  }
  learn(candidates, latencies);
}

}  // namespace dragon::search
