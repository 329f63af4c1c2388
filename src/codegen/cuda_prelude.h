// The prelude of generated CUDA code (cuda_prelude.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dragon/codegen/cuda_codegen.h"

namespace dragon::codegen {

// Ranks of the prelude's parts (PreludePart::rank), in the order they are printed.
enum PreludeRank : int {
  kPreludeHalfHeaders = 0,
  kPreludeCommon = 1,
  kPreludeSharedAddress = 2,
  kPreludeMma = 3,
  kPreludeWgmma = 4,
  kPreludeWgmmaHelper = 5,
  kPreludeAsyncCopy = 6,
};

// NVRTC's cuda_fp16.h and cuda_bf16.h: about 17 ms of NVRTC time a program (2026-12-05-
// nvrtc-prelude.md), so only sources that use a half type include them.
std::string_view half_headers_prelude();
// Fixed-width integer names, the special float values and the common helpers.
std::string cuda_common_prelude();
// Whether `code` (kernels and helpers) names anything cuda_fp16.h or cuda_bf16.h declare:
// the half types, their vector types, or the conversions the emitter prints.
bool uses_half_headers(std::string_view code);

}  // namespace dragon::codegen
