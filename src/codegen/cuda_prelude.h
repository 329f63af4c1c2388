// The prelude of generated CUDA code (cuda_prelude.cc).
#pragma once

#include <string>

namespace dragon::codegen {

std::string cuda_prelude();

}  // namespace dragon::codegen
