// IsolatedCandidate (isolated_candidate.h): compile once, then per run a sealed argument
// region, a fresh runner child with a job naming the compiled kernel, and a verdict from
// how the child ended. Tensors come back only from a run that succeeded.
#include "dragon/harness/isolated_candidate.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#include "child_process.h"
#include "child_verdict.h"
#include "dragon/harness/kernel_runner_protocol.h"
#include "dragon/runtime/cubin_symbols.h"
#include "handshake_nonce.h"
#include "runner_environment.h"
#include "runner_namespaces.h"
#include "shared_arguments.h"

namespace dragon::harness {
namespace {

using kernel_runner::Job;
using kernel_runner::JobKind;

runtime::CompileCache& cache_of(const IsolationOptions& options) {
  return options.cache != nullptr ? *options.cache : runtime::CompileCache::global();
}


// Compiler messages then name the user's file rather than the cache's scratch copy.
std::string line_marker(const std::string& source_name) {
  std::string quoted;
  for (char c : source_name) {
    if (c == '"' || c == '\\') quoted += '\\';
    if (c != '\n') quoted += c;
  }
  return "#line 1 \"" + quoted + "\"\n";
}

// Whether a runner for `language` starts in namespaces of its own; a machine without them
// under kRequired is the harness's failure, said before anything runs.
bool runner_namespaces_for(const IsolationOptions& options, KernelLanguage language) {
  if (language != KernelLanguage::kCpu || options.namespaces == RunnerNamespaces::kOff) return false;
  const isolation::NamespaceSupport& support = isolation::namespace_support();
  if (!support.available && options.namespaces == RunnerNamespaces::kRequired) {
    throw RuntimeError(DRAGON_RUNTIME_FAILURE(
        "runner namespaces", "IsolationOptions::namespaces is required, but this machine has " + support.description,
        ""));
  }
  return support.available;
}

bool positive(const std::array<int64_t, 3>& dims) { return dims[0] > 0 && dims[1] > 0 && dims[2] > 0; }

Expected<CompiledKernel> compile_cpu(const IsolatedKernel& kernel, const IsolationOptions& options) {
  Expected<std::string> runner = find_kernel_runner(options);
  if (!runner) return runner.error();
  Job job;
  job.kind = JobKind::kCompileCpu;
  job.nonce = isolation::fresh_handshake_nonce();
  job.entry = kernel.entry;
  job.source = line_marker(kernel.source_name) + kernel.source;
  job.cache_directory = cache_of(options).directory();
  job.compiler = options.cpu.compiler;
  job.optimization = options.cpu.optimization;
  job.march_native = options.cpu.march_native;
  isolation::ChildRequest request{runner.value(),
                                  kernel_runner::encode_job(job),
                                  -1,
                                  isolation::runner_environment(JobKind::kCompileCpu),
                                  options.compile_timeout,
                                  options.output_limit,
                                  options.hide_parent_memory,
                                  runner_namespaces_for(options, KernelLanguage::kCpu)};
  Expected<isolation::ChildRun> child = isolation::run_child(request);
  if (!child) return child.error();
  RunOutcome outcome = isolation::judge_child(child.value(), job.nonce, options.compile_timeout);
  std::optional<kernel_runner::Reply> reply = kernel_runner::decode_reply(child.value().reply);
  if (outcome.status == RunStatus::kFailed && reply) return reply->failure;  // the compiler's own words
  if (!outcome.ok()) {
    return DRAGON_RUNTIME_FAILURE(
        "compiling " + kernel.source_name,
        "the compiler's process " + std::string(run_status_name(outcome.status)) + ": " + outcome.reason, "");
  }
  CompiledKernel compiled;
  compiled.language = KernelLanguage::kCpu;
  compiled.entry = kernel.entry;
  compiled.module_path = reply->module_path;
  return compiled;
}

// The entry must be one of the CUBIN's kernels, found in its symbol table here, without a
// GPU: a wrong name then fails at compile time, as a CPU entry does.
Status check_cuda_entry(const std::string& cubin, const IsolatedKernel& kernel) {
  Expected<std::vector<std::string>> kernels = runtime::cubin_kernel_names(cubin);
  if (!kernels) return kernels.error();
  const std::vector<std::string>& names = kernels.value();
  if (std::find(names.begin(), names.end(), kernel.entry) != names.end()) return {};
  std::string listed;
  for (const std::string& name : names) {
    listed += (listed.empty() ? "" : ", ") + name;
    if (name.rfind("_Z", 0) == 0) listed += " (C++ linkage: not extern \"C\")";
  }
  return DRAGON_RUNTIME_FAILURE("cubin_kernel_names",
                                kernel.source_name + " has no kernel named '" + kernel.entry + "' (its kernels: " +
                                    (listed.empty() ? "none" : listed) +
                                    "); the entry must be an extern \"C\" __global__ function",
                                "");
}

Expected<CompiledKernel> compile_cuda(const IsolatedKernel& kernel, const IsolationOptions& options) {
  if (!positive(kernel.grid) || !positive(kernel.block) || kernel.dynamic_shared_bytes < 0) {
    return DRAGON_RUNTIME_FAILURE("launch configuration",
                                  kernel.source_name +
                                      ": grid and block extents must be positive and the dynamic "
                                      "shared memory size not negative",
                                  "");
  }
  Expected<runtime::Cubin> cubin =
      runtime::nvrtc_compile(kernel.source, kernel.source_name, options.nvrtc, cache_of(options));
  if (!cubin) return cubin.error();
  if (Status entry = check_cuda_entry(cubin.value().bytes, kernel); !entry) return entry.error();
  CompiledKernel compiled;
  compiled.language = KernelLanguage::kCuda;
  compiled.entry = kernel.entry;
  compiled.cubin = std::move(cubin.value().bytes);
  compiled.log = std::move(cubin.value().log);
  compiled.grid = kernel.grid;
  compiled.block = kernel.block;
  compiled.dynamic_shared_bytes = kernel.dynamic_shared_bytes;
  return compiled;
}

class IsolatedCandidate final : public Candidate {
 public:
  IsolatedCandidate(IsolatedKernel kernel, IsolationOptions options)
      : kernel_(std::move(kernel)), options_(std::move(options)) {}

  std::string name() const override { return kernel_.source_name + ":" + kernel_.entry; }

  RunOutcome run(std::vector<tensor::HostTensor>& args) override {
    Expected<CompiledKernel>& built = compiled();
    if (!built.ok()) {
      return RunOutcome::failure(RunStatus::kFailed,
                                 "compiling " + kernel_.source_name + ": " + built.error().describe());
    }
    const CompiledKernel& compiled = built.value();
    std::string runner = find_kernel_runner(options_).value();
    // Red zones by turns: guards (a read past an end poisons the output, a write is found
    // below), then page ends (the first access past an end faults).
    const RedZones red_zones = !options_.red_zones ? RedZones::kNone
                               : runs_++ % 2 == 0  ? RedZones::kGuards
                                                   : RedZones::kPageEnd;
    isolation::SharedArguments region = isolation::SharedArguments::create(args, red_zones).value();
    Job job;
    job.kind = compiled.language == KernelLanguage::kCpu ? JobKind::kRunCpu : JobKind::kRunCuda;
    job.nonce = isolation::fresh_handshake_nonce();
    job.entry = compiled.entry;
    job.module_path = compiled.module_path;
    job.cubin = compiled.cubin;
    job.grid = compiled.grid;
    job.block = compiled.block;
    job.dynamic_shared_bytes = compiled.dynamic_shared_bytes;
    job.arguments = region.layout().slices;
    job.region_bytes = region.layout().total_bytes;
    job.red_zones = red_zones;
    if (red_zones != RedZones::kNone) job.zones = region.layout().zones;
    isolation::ChildRequest request{runner,
                                    kernel_runner::encode_job(job),
                                    region.fd(),
                                    isolation::runner_environment(job.kind),
                                    options_.timeout,
                                    options_.output_limit,
                                    options_.hide_parent_memory,
                                    runner_namespaces_for(options_, compiled.language)};
    isolation::ChildRun child = isolation::run_child(request).value();
    RunOutcome outcome = isolation::judge_child(child, job.nonce, options_.timeout);
    if (!outcome.ok()) return outcome;
    std::vector<std::string> names;
    for (size_t i = 0; i < args.size(); ++i) names.push_back("argument " + std::to_string(i));
    if (std::string violations = region.red_zone_violations(names); !violations.empty()) {
      return RunOutcome::failure(RunStatus::kWroteOutOfBounds,
                                 violations + " (red zones: " + std::string(red_zones_name(red_zones)) + ")");
    }
    region.copy_out(args);
    return outcome;
  }

 private:
  // Compiled once, on the first run of any thread.
  Expected<CompiledKernel>& compiled() {
    std::lock_guard<std::mutex> lock(compile_mutex_);
    if (!compiled_) compiled_.emplace(compile_isolated_kernel(kernel_, options_));
    return *compiled_;
  }

  IsolatedKernel kernel_;
  IsolationOptions options_;
  std::mutex compile_mutex_;
  std::optional<Expected<CompiledKernel>> compiled_;
  std::atomic<uint64_t> runs_{0};
};

}  // namespace

bool uses_runner_namespaces(const IsolationOptions& options, KernelLanguage language) {
  return runner_namespaces_for(options, language);
}

std::string describe_runner_isolation(const IsolationOptions& options, KernelLanguage language) {
  if (language == KernelLanguage::kCuda) {
    return "a fresh process per run; the kernel's code runs on the GPU, where it reaches no file and no other "
           "process";
  }
  if (options.namespaces == RunnerNamespaces::kOff) {
    return "a fresh process per run, without namespaces (DRAGON_RUNNER_NAMESPACES=off or IsolationOptions); the "
           "harness's memory is hidden, its command line holds no secret";
  }
  const isolation::NamespaceSupport& support = isolation::namespace_support();
  if (support.available) return "a fresh process per run in " + support.description;
  return "a fresh process per run, " + support.description +
         "; the harness's memory is hidden, its command line holds no secret, but the kernel can read the command "
         "lines of other processes of its user";
}

Expected<CompiledKernel> compile_isolated_kernel(const IsolatedKernel& kernel,
                                                          const IsolationOptions& options) {
  return kernel.language == KernelLanguage::kCpu ? compile_cpu(kernel, options) : compile_cuda(kernel, options);
}

std::unique_ptr<Candidate> make_isolated_candidate(IsolatedKernel kernel, IsolationOptions options) {
  return std::make_unique<IsolatedCandidate>(std::move(kernel), std::move(options));
}

}  // namespace dragon::harness
