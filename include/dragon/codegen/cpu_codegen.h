// The CPU emitter: C++ source for one flat PrimFunc (lower.h), an extern "C" function
// taking its buffers in parameter order plus an entry `void ENTRY(void* const* args)`.
// OpenMP for parallel and simd loops; f16 and bf16 through a small prelude that rounds
// exactly like support/half.h. Prints only: compiling is runtime/'s job.
#pragma once

#include <string>

#include "dragon/ir/function.h"

namespace dragon::codegen {

struct CpuCodegenOptions {
  // The entry symbol; several functions compiled into one shared object need distinct
  // ones. The function itself is named after it ("<entry>_impl").
  std::string entry_name = "dragon_entry";
};

struct CpuSource {
  std::string code;        // a whole translation unit (the prelude is guarded: sources concatenate)
  std::string entry_name;  // void entry(void* const* args), args[i] = parameter i's data
};

// Throws InternalError for IR that is not in the flat form (blocks, multi-dimensional
// indices, vector types).
CpuSource generate_cpu(const ir::PrimFunc& flat, const CpuCodegenOptions& options = {});

}  // namespace dragon::codegen
