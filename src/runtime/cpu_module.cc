// CpuModule (cpu_module.h): compile through the cache, publish atomically, dlopen.
#include "dragon/runtime/cpu_module.h"

#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>

#include "captured_process.h"

namespace dragon::runtime {

std::vector<std::string> cpu_compile_flags(const CpuCompileOptions& options) {
  // -fwrapv: the IR's integers wrap. -ffp-contract=off: no fused multiply-adds, which the
  // interpreter (the reference) never forms.
  std::vector<std::string> flags = {"-std=c++17", options.optimization, "-fopenmp", "-fPIC", "-shared",
                                    "-fwrapv", "-ffp-contract=off", "-w"};
  if (options.march_native) flags.push_back("-march=native");
  return flags;
}

Expected<std::string> cpu_compiler_version(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = versions.find(compiler); it != versions.end()) return it->second;
  Expected<CapturedRun> run = run_captured({compiler, "--version"});
  if (!run) return run.error();
  if (run.value().exit_code != 0) {
    return DRAGON_RUNTIME_FAILURE(compiler, "--version exited with status " + std::to_string(run.value().exit_code),
                                  run.value().output);
  }
  std::string first = run.value().output.substr(0, run.value().output.find('\n'));
  versions[compiler] = first;
  return first;
}

Expected<std::shared_ptr<CpuModule>> CpuModule::compile(const std::string& source, const CpuCompileOptions& options,
                                                        CompileCache& cache) {
  Expected<std::string> version = cpu_compiler_version(options.compiler);
  if (!version) return version.error();
  std::vector<std::string> flags = cpu_compile_flags(options);
  std::string joined;
  for (const std::string& f : flags) joined += f + " ";
  std::string key = CompileCache::key({source, joined, version.value()});
  std::string path = cache.path(key, ".so");
  bool from_cache = cache.contains(key, ".so");
  if (from_cache) {
    cache.count_hit();
  } else {
    cache.count_miss();
    Expected<std::string> source_path = cache.scratch_path(".cc");
    if (!source_path) return source_path.error();
    {
      std::ofstream out(source_path.value());
      out << source;
      if (!out) return DRAGON_RUNTIME_FAILURE("write", "cannot write " + source_path.value(), "");
    }
    Expected<std::string> object_path = cache.scratch_path(".so");
    if (!object_path) return object_path.error();
    std::vector<std::string> argv = {options.compiler};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-o", object_path.value(), source_path.value()});
    Expected<CapturedRun> run = run_captured(argv);
    std::remove(source_path.value().c_str());
    if (!run) return run.error();
    if (run.value().exit_code != 0) {
      std::remove(object_path.value().c_str());
      return DRAGON_RUNTIME_FAILURE(options.compiler,
                                    "compiling generated C++ exited with status " +
                                        std::to_string(run.value().exit_code),
                                    run.value().output);
    }
    if (Status s = cache.publish(object_path.value(), key, ".so"); !s) return s.error();
  }
  // RTLD_NODELETE: generated code starts OpenMP worker threads (libgomp, loaded with it);
  // unmapping it while they live crashes the process at exit. It stays mapped.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) return DRAGON_RUNTIME_FAILURE("dlopen", "cannot load " + path, ::dlerror());
  return std::shared_ptr<CpuModule>(new CpuModule(handle, path, from_cache));
}

CpuModule::~CpuModule() { ::dlclose(handle_); }

Expected<CpuEntry> CpuModule::entry(const std::string& name) const {
  void* symbol = ::dlsym(handle_, name.c_str());
  if (symbol == nullptr) return DRAGON_RUNTIME_FAILURE("dlsym", "no symbol " + name + " in " + path_, "");
  return reinterpret_cast<CpuEntry>(symbol);
}

}  // namespace dragon::runtime
