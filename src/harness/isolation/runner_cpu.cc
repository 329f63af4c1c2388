// The runner's CPU jobs (runner_jobs.h): compile into the cache, and run a loaded entry.
#include <dlfcn.h>

#include <vector>

#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cpu_module.h"
#include "runner_jobs.h"

namespace dragon::harness::kernel_runner {

Reply compile_cpu_job(const Job& job) {
  runtime::CompileCache cache(job.cache_directory);
  runtime::CpuCompileOptions options;
  options.compiler = job.compiler;
  options.optimization = job.optimization;
  options.march_native = job.march_native;
  Expected<std::shared_ptr<runtime::CpuModule>> module =
      runtime::CpuModule::compile(job.source, options, cache);
  if (!module) return failure_reply(job, module.error());
  Expected<runtime::CpuEntry> entry = module.value()->entry(job.entry);
  if (!entry) {
    RuntimeFailure failure = entry.error();
    failure.message += " (the entry must be extern \"C\" void " + job.entry + "(void* const* args))";
    return failure_reply(job, failure);
  }
  return success_reply(job, module.value()->path());
}

Reply run_cpu_job(const Job& job, const std::vector<unsigned char*>& arguments) {
  // RTLD_NODELETE for the reason runtime/cpu_module.cc gives: OpenMP workers outlive it.
  void* handle = ::dlopen(job.module_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr)
    return failure_reply(job, DRAGON_RUNTIME_FAILURE("dlopen", "cannot load " + job.module_path, ::dlerror()));
  void* symbol = ::dlsym(handle, job.entry.c_str());
  if (symbol == nullptr) {
    return failure_reply(job, DRAGON_RUNTIME_FAILURE("dlsym", "no symbol " + job.entry + " in " + job.module_path, ""));
  }
  std::vector<void*> pointers(arguments.begin(), arguments.end());
  reinterpret_cast<runtime::CpuEntry>(symbol)(pointers.data());
  return success_reply(job);
}

}  // namespace dragon::harness::kernel_runner
