// Sketch quotas: how a batch of the evolutionary search is drawn from the cost model's
// ranking so that no sketch starves. The ranking follows a model trained on what was
// measured, and the population is seeded by the best measured programs, so the sketch
// that was measured first and most (plain tiling) fills the batches and a sketch that
// would win with more samples is barely tried: KernelBench 62 on an H100 measured 2 of 48
// tensor-core convolutions (best 58 ms against plain tiling's 16 ms); 16 tensor-core
// trials alone reached 10.2 ms. Each sketch still worth exploring gets a few slots of
// every batch: its top-ranked programs. The shares below are the smaller of two tried:
// half the batch and 16 exploring trials cost the CPU softmax tuning test its speedup
// (1.35x against 1.8x, same seed); a quarter and 8 kept it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace dragon::search {

// A sketch's record so far: programs of it measured, and its fastest verified one.
struct SketchStanding {
  int64_t measured = 0;
  std::optional<double> best_ms;
};

struct SketchQuotaOptions {
  // A sketch with fewer programs measured than this keeps its quota whatever its times.
  int64_t explore_trials = 8;
  // Beyond that, it keeps its quota while its best is within this factor of the best.
  double competitive_ratio = 2.0;
  // The quotas together take at most this share of the batch; the rest follows the ranking.
  double quota_share = 0.25;
};

// Picks up to `count` of `ranked` (each entry's sketch key, best-ranked first): first, for
// each sketch in the ranking that is still exploring or competitive (by `standing`; an
// unknown sketch is exploring), its best-ranked entries up to its quota, max(1, share *
// count / sketches); then the rest in ranking order. Returns indices into `ranked`,
// quota picks first (by rank), then the others by rank.
std::vector<size_t> pick_with_sketch_quotas(const std::vector<uint64_t>& ranked,
                                            const std::map<uint64_t, SketchStanding>& standing, int count,
                                            const SketchQuotaOptions& options = {});

}  // namespace dragon::search
