// CUDA source to CUBIN for the real architecture with NVRTC (never PTX: a PTX path costs a
// driver JIT at load and ran kernels slower, REFERENCE-performance.md §4), through the
// compile cache, on a pool of at most 8 threads (each NVRTC instance holds a few hundred
// MB). Needs no GPU. Without the CUDA toolkit at build time every call is a failure.
#pragma once

#include <string>
#include <vector>

#include "dragon/runtime/compile_cache.h"
#include "dragon/support/expected.h"

namespace dragon::runtime {

struct NvrtcOptions {
  std::string arch = "sm_90a";        // --gpu-architecture
  std::vector<std::string> extra;     // more options, part of the cache key
};

struct Cubin {
  std::string bytes;
  std::string log;  // NVRTC's warnings, if any
  bool from_cache = false;
};

// Whether this build has NVRTC, and its version ("13.0").
bool nvrtc_available();
Expected<std::string> nvrtc_version();
// The options NVRTC gets for `options` (architecture, C++17, include path of the toolkit's
// fp16/bf16 headers, -minimal where NVRTC has it).
std::vector<std::string> nvrtc_flags(const NvrtcOptions& options);

// One program (it may hold several kernels). A compile error returns NVRTC's log.
Expected<Cubin> nvrtc_compile(const std::string& source, const std::string& program_name,
                              const NvrtcOptions& options, CompileCache& cache);

// Many programs on min(max_threads, 8, programs) threads; results in input order.
std::vector<Expected<Cubin>> nvrtc_compile_all(const std::vector<std::string>& sources,
                                               const NvrtcOptions& options, CompileCache& cache,
                                               int max_threads = 8);

}  // namespace dragon::runtime
