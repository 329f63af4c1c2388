// MutateTileSize: moves a divisor of one level of a perfect tile to another level (the
// product stays the loop's extent, the innermost level stays within its bound), or redraws
// a cooperative-fetch vector length or a tile choice (a categorical among a rule's tiles or
// pipeline depths, e.g. the wgmma rule's N). Which decision is picked uniformly over all.
#include <memory>

#include "dragon/search/mutator.h"
#include "trace_queries.h"

namespace dragon::search {
namespace {

using namespace mutator_detail;
using schedule::Arg;
using schedule::InstructionKind;
using schedule::Trace;

// Divisors of n greater than 1, increasing.
std::vector<int64_t> divisors_above_one(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 2; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  if (n > 1) small.push_back(n);
  return small;
}

// A new tiling: a divisor of tiles[x] > 1 moved to tiles[y]; nullopt after a few failed
// draws (every level 1 but one that cannot give anything to the innermost level).
std::optional<std::vector<int64_t>> move_factor(std::vector<int64_t> tiles, int64_t max_innermost,
                                                schedule::RandomEngine& rng) {
  const int64_t n = static_cast<int64_t>(tiles.size());
  std::vector<int64_t> sources;
  for (int64_t i = 0; i < n; ++i) {
    if (tiles[i] > 1) sources.push_back(i);
  }
  if (sources.empty() || n < 2) return std::nullopt;
  for (int attempt = 0; attempt < 16; ++attempt) {
    int64_t x = pick(sources, rng);
    int64_t y = rng.uniform_int(0, n - 1);
    if (y >= x) ++y;  // any level but x
    std::vector<int64_t> choices;
    for (int64_t d : divisors_above_one(tiles[x])) {
      if (y == n - 1 && max_innermost > 0 && tiles[y] * d > max_innermost) break;
      choices.push_back(d);
    }
    if (choices.empty()) continue;
    int64_t d = pick(choices, rng);
    tiles[x] /= d;
    tiles[y] *= d;
    return tiles;
  }
  return std::nullopt;
}

class MutateTileSize final : public Mutator {
 public:
  std::string_view name() const override { return "mutate_tile_size"; }

  std::optional<Trace> apply(const Trace& trace, const ir::PrimFunc&, schedule::RandomEngine& rng) const override {
    std::vector<size_t> tiles;
    for (size_t i : decided_sites(trace, {SamplingRole::kTileSize})) {
      std::optional<std::vector<int64_t>> d = int_list_decision(*trace.decision(i));
      int64_t product = 1;
      if (d) {
        for (int64_t f : *d) product *= f;
      }
      if (d && d->size() >= 2 && product >= 2) tiles.push_back(i);
    }
    std::vector<size_t> fetches = decided_sites(trace, {SamplingRole::kVectorLength, SamplingRole::kTileChoice});
    // Uniform over both kinds; a choice that cannot change is dropped and another drawn.
    std::vector<size_t> choices = tiles;
    choices.insert(choices.end(), fetches.begin(), fetches.end());
    while (!choices.empty()) {
      size_t slot = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(choices.size())));
      size_t index = choices[slot];
      if (trace[index].kind == InstructionKind::SamplePerfectTile) {
        const auto* max_innermost = trace[index].attrs.at(1).as<int64_t>();
        std::optional<std::vector<int64_t>> moved =
            move_factor(*int_list_decision(*trace.decision(index)), max_innermost ? *max_innermost : -1, rng);
        if (moved) return trace.with_decision(index, Arg::int_list(*moved));
      } else if (std::optional<int64_t> redrawn = redraw_categorical(trace, index, rng)) {
        return trace.with_decision(index, Arg(*redrawn));
      }
      choices.erase(choices.begin() + static_cast<std::ptrdiff_t>(slot));
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Mutator> make_mutate_tile_size() { return std::make_unique<MutateTileSize>(); }

}  // namespace dragon::search
