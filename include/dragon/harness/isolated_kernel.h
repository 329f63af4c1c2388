// A kernel we did not generate, as source text: a C++ file for the CPU or a CUDA file,
// its entry name and (CUDA) its launch configuration. How such a kernel receives its
// arguments is docs/kernel-calling-convention.md. Running it is isolated_candidate.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace dragon::harness {

enum class KernelLanguage { kCpu, kCuda };
std::string_view kernel_language_name(KernelLanguage language);  // "cpu", "cuda"

// The entry name when none is given: the one our CPU code generator emits, so generated
// sources run isolated as they are.
inline constexpr std::string_view kDefaultKernelEntry = "dragon_entry";

struct IsolatedKernel {
  KernelLanguage language = KernelLanguage::kCpu;
  std::string source;
  std::string source_name = "kernel";  // a file name, for compiler messages and the candidate's name
  // CPU: extern "C" void ENTRY(void* const* args). CUDA: extern "C" __global__ void
  // ENTRY(T0* p0, T1* p1, ...), one device pointer per parameter.
  std::string entry = std::string(kDefaultKernelEntry);
  // CUDA only: one launch of this shape.
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t dynamic_shared_bytes = 0;
};

// Reads a kernel file: .cc, .cpp, .cxx are CPU C++, .cu is CUDA. Throws UserError when the
// file cannot be read or its extension is neither.
IsolatedKernel read_isolated_kernel(const std::string& path, std::string entry = std::string(kDefaultKernelEntry));

}  // namespace dragon::harness
