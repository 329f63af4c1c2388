// NVRTC compilation (nvrtc_compiler.h). Built with DRAGON_HAVE_NVRTC when the CUDA toolkit
// was found; otherwise every entry point reports that NVRTC is absent.
#include "dragon/runtime/nvrtc_compiler.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#if DRAGON_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace dragon::runtime {
namespace {

constexpr int kMaxCompileThreads = 8;

#if DRAGON_HAVE_NVRTC
RuntimeFailure nvrtc_failure(const char* api, nvrtcResult result, std::string log, const char* file, int line) {
  return RuntimeFailure{api, nvrtcGetErrorString(result), std::move(log), std::string(file) + ":" + std::to_string(line)};
}
#define DRAGON_NVRTC_FAILURE(api, result, log) nvrtc_failure(api, result, log, __FILE__, __LINE__)

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);
  return log;
}

Expected<Cubin> compile_uncached(const std::string& source, const std::string& name,
                                 const std::vector<std::string>& flags) {
  nvrtcProgram program = nullptr;
  nvrtcResult rc = nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) return DRAGON_NVRTC_FAILURE("nvrtcCreateProgram", rc, "");
  std::vector<const char*> options;
  for (const std::string& f : flags) options.push_back(f.c_str());
  rc = nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
  std::string log = program_log(program);
  if (rc != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    return DRAGON_NVRTC_FAILURE("nvrtcCompileProgram", rc, log);
  }
  size_t size = 0;
  rc = nvrtcGetCUBINSize(program, &size);
  Cubin cubin;
  cubin.log = log;
  if (rc == NVRTC_SUCCESS) {
    cubin.bytes.resize(size);
    rc = nvrtcGetCUBIN(program, cubin.bytes.data());
  }
  nvrtcDestroyProgram(&program);
  if (rc != NVRTC_SUCCESS) return DRAGON_NVRTC_FAILURE("nvrtcGetCUBIN", rc, log);
  return cubin;
}
#endif

}  // namespace

bool nvrtc_available() { return DRAGON_HAVE_NVRTC != 0; }

Expected<std::string> nvrtc_version() {
#if DRAGON_HAVE_NVRTC
  int major = 0, minor = 0;
  if (nvrtcResult rc = nvrtcVersion(&major, &minor); rc != NVRTC_SUCCESS) {
    return DRAGON_NVRTC_FAILURE("nvrtcVersion", rc, "");
  }
  return std::to_string(major) + "." + std::to_string(minor);
#else
  return DRAGON_RUNTIME_FAILURE("nvrtcVersion", "this build has no NVRTC (the CUDA toolkit was not found)", "");
#endif
}

std::vector<std::string> nvrtc_flags(const NvrtcOptions& options) {
  std::vector<std::string> flags = {"--gpu-architecture=" + options.arch, "-std=c++17", "-default-device"};
#if DRAGON_HAVE_NVRTC
  // -minimal (NVRTC 12.4+) leaves out textures, surfaces, the device runtime (cudadevrt)
  // and the runtime's types, none of which generated code uses: about 6 ms less a program
  // on NVRTC 13.0, with byte-identical CUBINs (2026-12-05-nvrtc-prelude.md).
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS && (major > 12 || (major == 12 && minor >= 4))) {
    flags.push_back("-minimal");
  }
#endif
#ifdef DRAGON_CUDA_INCLUDE_DIR
  flags.push_back("--include-path=" DRAGON_CUDA_INCLUDE_DIR);
#endif
  flags.insert(flags.end(), options.extra.begin(), options.extra.end());
  return flags;
}

Expected<Cubin> nvrtc_compile(const std::string& source, const std::string& program_name,
                              const NvrtcOptions& options, CompileCache& cache) {
#if DRAGON_HAVE_NVRTC
  Expected<std::string> version = nvrtc_version();
  if (!version) return version.error();
  std::vector<std::string> flags = nvrtc_flags(options);
  std::string joined;
  for (const std::string& f : flags) joined += f + " ";
  std::string key = CompileCache::key({source, joined, version.value()});
  if (std::optional<std::string> bytes = cache.load(key, ".cubin")) {
    Cubin cubin;
    cubin.bytes = std::move(*bytes);
    cubin.from_cache = true;
    return cubin;
  }
  Expected<Cubin> cubin = compile_uncached(source, program_name, flags);
  if (!cubin) return cubin;
  if (Status s = cache.store(key, ".cubin", cubin.value().bytes); !s) return s.error();
  return cubin;
#else
  (void)source, (void)program_name, (void)options, (void)cache;
  return DRAGON_RUNTIME_FAILURE("nvrtcCompileProgram", "this build has no NVRTC (the CUDA toolkit was not found)", "");
#endif
}

std::vector<Expected<Cubin>> nvrtc_compile_all(const std::vector<std::string>& sources, const NvrtcOptions& options,
                                               CompileCache& cache, int max_threads) {
  std::vector<std::optional<Expected<Cubin>>> results(sources.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < sources.size(); i = next++) {
      results[i].emplace(nvrtc_compile(sources[i], "program" + std::to_string(i) + ".cu", options, cache));
    }
  };
  int threads = std::max(1, std::min({max_threads, kMaxCompileThreads, static_cast<int>(sources.size())}));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  std::vector<Expected<Cubin>> out;
  out.reserve(sources.size());
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace dragon::runtime
