// The column layout of a feature row, generated from program_features.def: an enum per
// section and the index of each column. Private to the cost model; program_features.h
// exposes names and indices by string.
#pragma once

#include <span>

#include "dragon/search/program_features.h"

namespace dragon::search::features {

enum class StoreColumn : int {
#define DRAGON_STORE_FEATURE(name, description) name,
#include "program_features.def"
  kCount
};
enum class BufferColumn : int {
#define DRAGON_BUFFER_FEATURE(name, description) name,
#include "program_features.def"
  kCount
};
enum class LoopColumn : int {
#define DRAGON_LOOP_FEATURE(name, description) name,
#include "program_features.def"
  kCount
};

inline constexpr int kStoreColumns = static_cast<int>(StoreColumn::kCount);
inline constexpr int kBufferColumns = static_cast<int>(BufferColumn::kCount);
inline constexpr int kLoopColumns = static_cast<int>(LoopColumn::kCount);
inline constexpr int kBufferBase = kStoreColumns;
inline constexpr int kCurveBase = kBufferBase + kBufferColumns * kFeatureBufferSlots;
inline constexpr int kLoopBase = kCurveBase + kIntensityCurveSamples;
inline constexpr int kColumns = kLoopBase + kLoopColumns;

constexpr int column(StoreColumn c) { return static_cast<int>(c); }
constexpr int column(int slot, BufferColumn c) { return kBufferBase + slot * kBufferColumns + static_cast<int>(c); }
constexpr int curve_column(int sample) { return kCurveBase + sample; }
constexpr int column(LoopColumn c) { return kLoopBase + static_cast<int>(c); }

// A row being filled: set() scales counts, set_raw() stores one-hot and already-scaled values.
class RowWriter {
 public:
  explicit RowWriter(std::span<float> row) : row_(row) {}
  void set(int col, double count) { row_[static_cast<size_t>(col)] = static_cast<float>(feature_scale(count)); }
  void set_raw(int col, double value) { row_[static_cast<size_t>(col)] = static_cast<float>(value); }

 private:
  std::span<float> row_;
};

}  // namespace dragon::search::features
