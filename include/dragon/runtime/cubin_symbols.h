// The kernels a CUBIN defines, read from its ELF symbol table without a GPU: what lets a
// kernel file's entry name be checked at compile time (docs/kernel-calling-convention.md).
// Not a loader (cuda_driver.h loads modules) and not a disassembler.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dragon/support/expected.h"

namespace dragon::runtime {

// The names of the __global__ functions (entry points) in `cubin`, in symbol-table order:
// FUNC symbols that the CUDA toolchain marks as entries (STO_CUDA_ENTRY in st_other).
// Device functions, variables and sections are not kernels. A C++ kernel appears under
// its mangled name ("_Z4reluPKfPf"); an extern "C" one under its plain name. A failure
// says what is malformed: not ELF64 little-endian, sections or names out of bounds.
Expected<std::vector<std::string>> cubin_kernel_names(std::string_view cubin);

}  // namespace dragon::runtime
