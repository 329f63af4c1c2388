// Names, descriptions and lookup of the feature columns (from program_features.def), and
// the slog scale every count goes through.
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "dragon/support/error.h"
#include "feature_columns.h"

namespace dragon::search {
namespace {

struct ColumnTable {
  std::vector<std::string> names;
  std::vector<std::string> descriptions;
  std::unordered_map<std::string, int> index;

  ColumnTable() {
    auto add = [&](std::string name, std::string description) {
      index.emplace(name, static_cast<int>(names.size()));
      names.push_back(std::move(name));
      descriptions.push_back(std::move(description));
    };
#define DRAGON_STORE_FEATURE(name, description) add(#name, description);
#include "program_features.def"
    for (int slot = 0; slot < kFeatureBufferSlots; ++slot) {
#define DRAGON_BUFFER_FEATURE(name, description) \
  add(fmt::format("buffer{}." #name, slot), fmt::format("buffer slot {}: {}", slot, description));
#include "program_features.def"
    }
    for (int sample = 0; sample < kIntensityCurveSamples; ++sample) {
#define DRAGON_CURVE_FEATURE(name, description) \
  add(fmt::format(#name "{}", sample), fmt::format("{} (k = {})", description, sample));
#include "program_features.def"
    }
#define DRAGON_LOOP_FEATURE(name, description) add(#name, description);
#include "program_features.def"
    DRAGON_CHECK(static_cast<int>(names.size()) == features::kColumns, "feature table has {} columns, layout {}",
                 names.size(), features::kColumns);
  }
};

const ColumnTable& table() {
  static const ColumnTable columns;
  return columns;
}

}  // namespace

int feature_count() { return features::kColumns; }
const std::vector<std::string>& feature_names() { return table().names; }
const std::vector<std::string>& feature_descriptions() { return table().descriptions; }

int feature_index(std::string_view name) {
  const auto& index = table().index;
  auto it = index.find(std::string(name));
  if (it == index.end()) {
    throw UserError(fmt::format("unknown cost-model feature '{}' (see src/search/cost_model/program_features.def)", name));
  }
  return it->second;
}

double feature_scale(double x) { return x >= 0 ? std::log2(x + 1) : -std::log2(-x + 1); }

}  // namespace dragon::search
