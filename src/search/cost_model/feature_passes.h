// Annotation keys shared by prepare_for_features and the per-store extractor.
#pragma once

#include <string_view>

namespace dragon::search::features {

// The lowering annotation unroll_loops consumes, and the copy prepare_for_features keeps.
inline constexpr std::string_view kAutoUnrollKey = "pragma_auto_unroll_max_step";
inline constexpr std::string_view kKeptAutoUnrollKey = "feature.auto_unroll_max_step";
// The block annotation lower_blocks keeps on a unit loop for tensorized blocks.
inline constexpr std::string_view kTensorIntrinKey = "tensor_intrin";

}  // namespace dragon::search::features
