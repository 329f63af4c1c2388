// Internal to the built-in tensor intrinsics (tensor_intrin_mma.cc, tensor_intrin_wgmma.cc):
// the operand scopes they allow, the parse of a description, and the accumulator fill and
// store both families describe alike.
#pragma once

#include <string>
#include <vector>

#include "dragon/schedule/tensor_intrin.h"

namespace dragon::schedule::detail {

inline const std::vector<std::string> kFragmentScopes = {"warp"};
inline const std::vector<std::string> kSharedScopes = {"shared", "shared.dyn"};
inline const std::vector<std::string> kStoreTargetScopes = {"shared", "shared.dyn", "global"};

// The intrinsic `name` described by the IR function `text` (its operands in `scopes`).
TensorIntrin make_tensor_intrin(std::string name, const std::string& text, std::vector<std::vector<std::string>> scopes,
                                std::string summary);
// Zeroes a `rows` x 8 f32 accumulator tile held in fragments.
TensorIntrin accumulator_fill(std::string name, int rows, std::string summary);
// Stores a `rows` x 8 f32 accumulator tile from fragments to shared or global memory.
TensorIntrin accumulator_store(std::string name, int rows, std::string summary);

}  // namespace dragon::schedule::detail
