// Generated C++ compiled by the system compiler (g++ -O2 -fopenmp -shared -fPIC) into a
// shared object kept in the compile cache, then loaded with dlopen. Several generated
// sources may be compiled into one module (distinct entry names) to pay the compiler once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dragon/runtime/compile_cache.h"
#include "dragon/support/expected.h"

namespace dragon::runtime {

struct CpuCompileOptions {
  std::string compiler = "g++";
  std::string optimization = "-O2";
  bool march_native = false;  // -march=native: faster code that only this machine runs
};

// The flags the compiler gets (part of the cache key).
std::vector<std::string> cpu_compile_flags(const CpuCompileOptions& options);

// The entry every generated CPU function has: args[i] is parameter i's data.
using CpuEntry = void (*)(void* const* args);

class CpuModule {
 public:
  // Compiles `source` (or finds it in `cache`) and loads it. A compiler error returns the
  // compiler's output as the failure's log.
  static Expected<std::shared_ptr<CpuModule>> compile(const std::string& source, const CpuCompileOptions& options,
                                                      CompileCache& cache);
  ~CpuModule();
  CpuModule(const CpuModule&) = delete;
  CpuModule& operator=(const CpuModule&) = delete;

  Expected<CpuEntry> entry(const std::string& name) const;
  bool from_cache() const { return from_cache_; }
  const std::string& path() const { return path_; }

 private:
  CpuModule(void* handle, std::string path, bool from_cache)
      : handle_(handle), path_(std::move(path)), from_cache_(from_cache) {}
  void* handle_;
  std::string path_;
  bool from_cache_;
};

// "g++ (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0": the compiler's first line of --version.
Expected<std::string> cpu_compiler_version(const std::string& compiler);

}  // namespace dragon::runtime
