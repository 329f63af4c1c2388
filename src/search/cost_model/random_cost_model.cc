// RandomCostModel: seeded uniform scores, the cold start of search.
#include <sstream>

#include "dragon/search/cost_model.h"
#include "model_file.h"

namespace dragon::search {

RandomCostModel::RandomCostModel(uint64_t seed) : engine_(seed) {}

void RandomCostModel::update(const std::vector<FeaturizedCandidate>&) {}

std::vector<double> RandomCostModel::predict(const std::vector<FeaturizedCandidate>& candidates) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> scores;
  scores.reserve(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) scores.push_back(uniform(engine_));
  return scores;
}

void RandomCostModel::save(const std::filesystem::path& path) const {
  model_file::Writer out("random");
  std::ostringstream state;
  state << engine_;
  out.bytes(state.str());
  out.save(path);
}

void RandomCostModel::load(const std::filesystem::path& path) {
  model_file::Reader in(path, "random");
  std::istringstream state(in.bytes("random engine state"));
  std::mt19937_64 engine;
  state >> engine;
  if (state.fail()) in.fail("the random engine state does not parse");
  in.finish();
  engine_ = engine;
}

}  // namespace dragon::search
