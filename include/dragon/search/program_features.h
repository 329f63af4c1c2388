// Per-store program features for the learned cost model (MetaSchedule's PerStoreFeature,
// redone on our IR): one fixed-length row per store statement of a scheduled function,
// computed on the lowering pipeline's block-free, still multi-dimensional IR. The columns
// are listed once, with their meaning, in src/search/cost_model/program_features.def.
// Not a model: cost_model.h turns rows into scores.
//
// Every count is scaled by slog(x) = sign(x) * log2(|x| + 1) (feature_scale) so that the
// trees see loop products from 1 to 2^40 on one scale; one-hot columns are 0 or 1.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"

namespace dragon::search {

// Buffers described per store (the store's own buffer and the buffers it loads), most
// cache lines first; a store touching fewer leaves the remaining slots zero.
inline constexpr int kFeatureBufferSlots = 5;
// Samples of the arithmetic-intensity curve (flops / unique bytes, from the innermost loop
// out, resampled at 10 evenly spaced fractions of the store's flops).
inline constexpr int kIntensityCurveSamples = 10;

// The number of columns of a row, and their names in order ("float_mad",
// "buffer0.unique_bytes", "intensity3", ...), generated from program_features.def.
int feature_count();
const std::vector<std::string>& feature_names();
// One sentence per column: what it measures (the .def's descriptions).
const std::vector<std::string>& feature_descriptions();
// The column of `name`; throws UserError for an unknown name.
int feature_index(std::string_view name);
// sign(x) * log2(|x| + 1): how every count enters a row.
double feature_scale(double x);

struct FeatureOptions {
  // Cache-line size for the line counts (bytes): 64 on x86 CPUs; 128-byte L1 lines on
  // the GPU, whose coalescing unit is a 32-byte sector: the default 64 follows
  // MetaSchedule on both.
  int64_t cache_line_bytes = 64;
};

// The rows of one program: rows() x feature_count() floats, row-major (what XGBoost reads).
// No row for a store of a constant (reduction inits, fills): MetaSchedule skips them too.
struct ProgramFeatures {
  std::vector<float> values;

  int64_t rows() const { return static_cast<int64_t>(values.size()) / feature_count(); }
  std::span<const float> row(int64_t i) const {
    return std::span<const float>(values).subspan(static_cast<size_t>(i * feature_count()),
                                                  static_cast<size_t>(feature_count()));
  }
  float at(int64_t row_index, std::string_view column) const { return row(row_index)[feature_index(column)]; }
};

// The passes of lower/passes.h that features see, in lower()'s order, up to (not
// including) flatten_buffers: cross-thread reductions (GPU), reduction inits, allocation
// placement, blocks removed, simplified, buffers compacted, thread loops serialized
// (CPU) and auto-unroll applied. Buffers are still multi-dimensional, so accesses have
// per-dimension regions and strides. A schedule the target cannot run may still have
// features (nothing here checks GPU limits); a UserError of a pass propagates.
ir::PrimFunc prepare_for_features(const ir::PrimFunc& scheduled, const lower::Target& target);

// Rows of a function prepare_for_features returned.
ProgramFeatures extract_prepared_features(const ir::PrimFunc& prepared, const lower::Target& target,
                                          const FeatureOptions& options = {});

// prepare_for_features + extract_prepared_features: what the cost model calls.
ProgramFeatures extract_program_features(const ir::PrimFunc& scheduled, const lower::Target& target,
                                         const FeatureOptions& options = {});

}  // namespace dragon::search
