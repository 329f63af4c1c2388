// Evolutionary search over one task's design space (MetaSchedule's EvolutionarySearch):
// each batch starts from a population of the best measured programs (replayed from their
// traces) and fresh samples of the sketches, evolves it for a few generations (parents
// drawn by the cost model's score, children by a mutator, or the parent copied), and
// proposes the programs the model ranks best that were never measured, with a share
// (epsilon-greedy) drawn at random from the fresh samples. Duplicates are recognised by
// the structural hash of the scheduled function. Measuring is the caller's
// (measurer.h); this class only proposes and learns from what it is told.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dragon/lower/target.h"
#include "dragon/search/cost_model.h"
#include "dragon/search/measure_result.h"
#include "dragon/search/mutator.h"
#include "dragon/search/sketch_quota.h"
#include "dragon/search/sketch_space.h"

namespace dragon::search {

// MetaSchedule's defaults, except that the population and the generations are smaller:
// our CPU work per candidate is what limits a 2-core machine.
struct EvolutionarySearchOptions {
  int population = 256;
  double init_measured_ratio = 0.2;  // share of the population from the best measured programs
  int init_min_unmeasured = 50;      // fresh samples wanted per batch (fewer after max_fail_count empty rounds)
  int max_fail_count = 5;            // rounds of fresh sampling that found nothing new before giving up
  int genetic_num_iters = 4;
  double genetic_mutate_prob = 0.85;
  int genetic_max_fail_count = 10;   // tries to mutate a parent into a valid program
  double eps_greedy = 0.05;
  SketchQuotaOptions sketch_quotas;  // slots of each batch kept for every sketch worth exploring
  double seed_share = 0.25;          // of a batch, at most this share from add_seeds' programs
  int threads = 0;                   // for replaying candidates (0: hardware concurrency)
  int64_t seed = 1;
};

// A proposed (or measured) program.
struct SearchCandidate {
  schedule::Trace trace;   // with postprocessing: what a record stores
  ir::PrimFunc scheduled;  // replayed and postprocessed
  uint64_t hash = 0;       // ir::structural_hash(scheduled)
  uint64_t sketch = 0;     // sketch_key(trace): which sketch it was drawn from
};

// The identity of a trace's sketch: a hash of its instructions before postprocessing,
// without their decisions (sampling and mutation change only decisions).
uint64_t sketch_key(const schedule::Trace& trace);

struct SearchStatistics {
  int64_t sampled = 0, sample_failures = 0;  // fresh samples that realized / did not
  int64_t mutated = 0, mutation_failures = 0;
  int64_t proposed = 0;
  int64_t seeded = 0;             // of the proposed, programs transferred from other workloads (add_seeds)
  int64_t realized = 0;           // replays + postprocessing done (successful or not)
  double realize_seconds = 0;     // their CPU time (thread CPU clock), summed over threads
  double seconds = 0;             // wall time in propose()
};

class EvolutionarySearch {
 public:
  EvolutionarySearch(const SketchSpace& space, lower::Target target, std::string workload, CostModel& model,
                     std::vector<WeightedMutator> mutators, EvolutionarySearchOptions options = {});

  // Programs measured before (database records): each trace is replayed (one that no
  // longer replays is left out) and joins the measured programs and the cost model's
  // training data. `latency_ms` nullopt for a failed one. Returns how many were added.
  struct MeasuredTrace {
    schedule::Trace trace;
    std::optional<double> latency_ms;
  };
  int64_t add_measured(const std::vector<MeasuredTrace>& records);

  // Programs from elsewhere worth measuring early: the best traces of other workloads of
  // the same kind (transfer). Each is replayed on this workload without its postprocessing
  // (its perfect tiles repaired to these extents), then postprocessed afresh; those that
  // realize and are new head the next batches, at most seed_share of each. Returns how
  // many realized.
  int64_t add_seeds(const std::vector<schedule::Trace>& traces);

  // Up to `count` programs never measured (fewer, possibly none, when the space yields no
  // more: a task whose sketches all fail gets an empty batch, never a hang).
  std::vector<SearchCandidate> propose(int count);
  // What measuring proposed candidates gave, in order: they join the measured programs and
  // the cost model's training data.
  void report(const std::vector<SearchCandidate>& candidates, const std::vector<MeasureResult>& results);

  std::optional<double> best_ms() const { return best_ms_; }
  const SearchCandidate* best() const { return best_ ? &*best_ : nullptr; }
  int64_t measured_count() const { return static_cast<int64_t>(measured_hashes_.size()); }
  const SearchStatistics& statistics() const { return statistics_; }

 private:
  struct Scored {
    SearchCandidate candidate;
    double score = 0;
  };
  void learn(const std::vector<SearchCandidate>& candidates, const std::vector<std::optional<double>>& latencies_ms);
  std::vector<SearchCandidate> best_measured(int count) const;
  std::vector<SearchCandidate> sample_fresh(int count);
  std::vector<SearchCandidate> evolve(std::vector<SearchCandidate> population, int wanted);
  void extract_features(const std::vector<SearchCandidate>& candidates);
  std::vector<double> score(const std::vector<SearchCandidate>& candidates);
  // Replays and postprocesses; adds its CPU time to `seconds`.
  // A candidate replayed from `trace`, or a fresh one of a sketch (SketchSpace::sample);
  // `seconds` gains the thread CPU time it took.
  std::optional<SearchCandidate> realize(const schedule::Trace& trace, int64_t seed, double& seconds) const;
  std::optional<SearchCandidate> sample(size_t sketch, int64_t seed, double& seconds) const;
  static std::optional<SearchCandidate> timed_candidate(const std::function<Realized()>& make, double& seconds);
  void count_realized(const std::vector<double>& seconds);
  int64_t next_seed() { return rng_.fork_seed(); }

  const SketchSpace& space_;
  lower::Target target_;
  std::string workload_;
  CostModel& model_;
  std::vector<WeightedMutator> mutators_;
  EvolutionarySearchOptions options_;
  schedule::RandomEngine rng_;
  std::unordered_set<uint64_t> measured_hashes_;
  std::vector<std::pair<double, SearchCandidate>> measured_ok_;  // (latency, program), fastest first
  std::unordered_map<uint64_t, FeaturizedCandidate> features_;
  std::optional<double> best_ms_;
  std::optional<SearchCandidate> best_;
  std::map<uint64_t, SketchStanding> standing_;  // by sketch key
  std::vector<SearchCandidate> seeds_;            // transferred programs not proposed yet
  SearchStatistics statistics_;
};

}  // namespace dragon::search
