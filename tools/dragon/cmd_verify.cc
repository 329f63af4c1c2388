// dragon verify: judges a kernel we did not write (a .cc for the CPU or a .cu for the GPU,
// docs/kernel-calling-convention.md) against an op spec's reference. The kernel is
// compiled before anything runs, then every run happens in a child process
// (isolated_candidate.h) and the verifier (verify.h) gives the verdict with its reasons.
// With --time, a CUDA kernel that passed is then timed in a runner child with every timed
// call's outputs checked and the physics floor applied (isolated_timing.h).
// Exit status 0 only for a pass on a problem that trivial outputs do not also pass (and,
// with --time, a timing that is neither wrong nor impossible).
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/harness/command_line_secret.h"
#include "dragon/harness/isolated_candidate.h"
#include "dragon/harness/isolated_kernel.h"
#include "dragon/harness/isolated_timing.h"
#include "dragon/harness/verify.h"
#include "dragon/interp/input_generator.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/support/error.h"
#include "function_source.h"

namespace dragon::cli {
namespace {

struct VerifyCommandOptions {
  FunctionSource source;
  std::string kernel_file;
  std::string entry = std::string(harness::kDefaultKernelEntry);
  std::string grid;   // "X[,Y[,Z]]"; empty: not given
  std::string block;
  int64_t shared_bytes = 0;
  std::optional<uint64_t> seed;
  double timeout_seconds = 10;
  bool json = false;
  bool time = false;
};

// "X[,Y[,Z]]" with positive integers; missing extents are 1.
std::array<int64_t, 3> parse_launch_dims(const std::string& text, const char* flag) {
  std::array<int64_t, 3> dims{1, 1, 1};
  auto bad = [&](const std::string& why) {
    return UserError(fmt::format("{} '{}': {}; expected X[,Y[,Z]] with positive integers, e.g. {} 4,2", flag, text,
                                 why, flag));
  };
  size_t start = 0;
  for (size_t d = 0;; ++d) {
    if (d == 3) throw bad("more than three extents");
    size_t comma = text.find(',', start);
    std::string_view part(text.data() + start, (comma == std::string::npos ? text.size() : comma) - start);
    int64_t value = 0;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
      throw bad(fmt::format("'{}' is not an integer", part));
    }
    if (value <= 0) throw bad(fmt::format("extent {} is not positive", value));
    dims[d] = value;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return dims;
}

harness::IsolatedKernel read_kernel(const VerifyCommandOptions& options) {
  if (!std::filesystem::is_regular_file(options.kernel_file)) {
    throw UserError(fmt::format("--kernel {}: no such file", options.kernel_file));
  }
  harness::IsolatedKernel kernel = harness::read_isolated_kernel(options.kernel_file, options.entry);
  const bool launch_given = !options.grid.empty() || !options.block.empty() || options.shared_bytes != 0;
  if (kernel.language == harness::KernelLanguage::kCpu) {
    if (options.time) {
      throw UserError(fmt::format("--time times CUDA kernels (.cu) on the GPU; {} is a CPU kernel, and CPU timing is "
                                  "not offered (verify it without --time)",
                                  options.kernel_file));
    }
    if (launch_given) {
      throw UserError(fmt::format("--grid, --block and --shared apply to CUDA kernels (.cu); {} is a CPU kernel, "
                                  "called once with all its arguments",
                                  options.kernel_file));
    }
    return kernel;
  }
  if (options.grid.empty() || options.block.empty()) {
    throw UserError(fmt::format("{} is a CUDA kernel: give its launch shape with --grid X[,Y[,Z]] and "
                                "--block X[,Y[,Z]] (it is launched exactly once)",
                                options.kernel_file));
  }
  if (options.shared_bytes < 0) throw UserError("--shared: the dynamic shared memory size must not be negative");
  kernel.grid = parse_launch_dims(options.grid, "--grid");
  kernel.block = parse_launch_dims(options.block, "--block");
  kernel.dynamic_shared_bytes = options.shared_bytes;
  return kernel;
}

harness::IsolationOptions isolation_options(const VerifyCommandOptions& options) {
  if (!(options.timeout_seconds > 0) || !std::isfinite(options.timeout_seconds)) {
    throw UserError("--timeout: the time limit of one run must be a positive number of seconds");
  }
  harness::IsolationOptions isolation;
  isolation.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(options.timeout_seconds * 1000)));
  return isolation;
}

// Compile errors are the user's to fix, so they end the command before any run, with the log.
void compile_first(const harness::IsolatedKernel& kernel, const harness::IsolationOptions& isolation) {
  Expected<harness::CompiledKernel> compiled = harness::compile_isolated_kernel(kernel, isolation);
  if (!compiled) {
    throw UserError(fmt::format("{} does not compile, or has no entry '{}' (nothing was run):\n{}",
                                kernel.source_name, kernel.entry, compiled.error().describe()));
  }
  if (!compiled.value().log.empty()) {
    std::fprintf(stderr, "%s: compiler messages:\n%s\n", kernel.source_name.c_str(), compiled.value().log.c_str());
  }
}

// What was verified, so that a pass says what it is evidence of.
struct ChecksRun {
  std::vector<std::string> distributions;
  int sibling_sets = 0;
  bool secret_seed = true;
  bool determinism = false;
  bool trivial_output_audit = false;
};

// From the verdict's input sets, which are those actually made (an op without a
// real-valued input gets no siblings).
ChecksRun describe_checks(const harness::VerifyOptions& options, const harness::Verdict& verdict) {
  ChecksRun checks;
  for (const harness::InputSetReport& set : verdict.input_sets) {
    if (set.label == set.distribution) {
      checks.distributions.push_back(set.distribution);
    } else {
      ++checks.sibling_sets;
    }
  }
  checks.secret_seed = !options.seed.has_value();
  checks.determinism = options.check_determinism;
  checks.trivial_output_audit = options.audit_trivial_outputs;
  return checks;
}

std::string checks_text(const ChecksRun& checks, const harness::IsolatedKernel& kernel,
                        const harness::IsolationOptions& isolation) {
  std::string text = fmt::format(
      "checks: {} input sets ({}{}) from {}; outputs pre-filled with a NaN sentinel; "
      "NaN/Inf, input mutation and outputs that ignore (part of) their inputs checked on every set",
      checks.distributions.size() + static_cast<size_t>(checks.sibling_sets), fmt::join(checks.distributions, ", "),
      checks.sibling_sets > 0
          ? fmt::format(", and {} siblings of the first two, each with a few elements of one input changed",
                        checks.sibling_sets)
          : "",
      checks.secret_seed ? "a secret seed" : "the given seed");
  if (checks.determinism) text += "; determinism: every set run again with garbage in the outputs";
  if (checks.trivial_output_audit) {
    text += "; trivial-output audit: zeros, ones, the reference's mean, another set's output and the inputs passed "
            "through must fail too";
  }
  text += fmt::format("\nisolation: every run in a fresh dragon-kernel-runner process ({}, time limit {} ms per run): {}",
                      harness::kernel_language_name(kernel.language), isolation.timeout.count(),
                      harness::describe_runner_isolation(isolation, kernel.language));
  if (isolation.red_zones) {
    text += "\nred zones: every buffer between guards of NaN (checked after the run) and, every other run, ending where "
            "its memory ends (an overrun faults)";
  }
  return text;
}

// What --time adds to the JSON verdict: the timing's outcome, figures, GPU and floor.
nlohmann::json timing_json(const harness::IsolatedTiming& t) {
  nlohmann::json j = {{"outcome", harness::timing_outcome_id(t.outcome)},
                      {"ok", t.ok()},
                      {"reason", t.reason},
                      {"seed", t.seed},
                      {"input_sets", t.input_sets},
                      {"call_limit", t.call_limit}};
  const harness::GpuTiming& g = t.timing;
  if (t.run.ok()) {
    int wrong = 0;
    for (const harness::CallCheck& c : t.calls) wrong += c.ok ? 0 : 1;
    j["median_ms"] = g.median_ms;
    j["mean_ms"] = g.mean_ms;
    j["min_ms"] = g.min_ms;
    j["max_ms"] = g.max_ms;
    j["stddev_ms"] = g.stddev_ms;
    j["ci95_half_width_ms"] = g.ci95_half_width_ms;
    j["converged"] = g.converged;
    j["calls"] = g.samples_ms.size();
    j["samples_ms"] = g.samples_ms;
    j["calls_checked"] = t.calls.size();
    j["wrong_calls"] = wrong;
    j["first_wrong_call"] = t.first_wrong_call >= 0 ? nlohmann::json(t.first_wrong_call) : nlohmann::json(nullptr);
    j["calls_below_floor"] = t.calls_below_floor;
    const harness::GpuState& s = t.gpu_state;
    j["gpu"] = {{"name", s.name},
                {"sm_clock_mhz", s.sm_clock_mhz},
                {"max_sm_clock_mhz", s.max_sm_clock_mhz},
                {"memory_clock_mhz", s.memory_clock_mhz},
                {"temperature_c", s.temperature_c},
                {"driver_version", s.driver_version}};
  }
  j["floor"] = {{"ms", t.floor.floor_ms},
                {"bytes", t.floor.bytes},
                {"flops", t.floor.flops},
                {"compute_bound", t.floor.compute_bound},
                {"peaks", t.peaks_source}};
  return j;
}

std::string verdict_json(const harness::Verdict& verdict, const ChecksRun& checks,
                         const harness::IsolatedKernel& kernel, const harness::IsolationOptions& isolation,
                         const std::optional<nlohmann::json>& timing) {
  nlohmann::json j = nlohmann::json::parse(verdict.to_json());
  j["kernel"] = {{"file", kernel.source_name},
                 {"entry", kernel.entry},
                 {"language", harness::kernel_language_name(kernel.language)}};
  if (kernel.language == harness::KernelLanguage::kCuda) {
    j["kernel"]["grid"] = kernel.grid;
    j["kernel"]["block"] = kernel.block;
    j["kernel"]["shared_bytes"] = kernel.dynamic_shared_bytes;
  }
  j["checks"] = {{"distributions", checks.distributions},
                 {"sibling_input_sets", checks.sibling_sets},
                 {"red_zones", isolation.red_zones},
                 {"isolation", harness::describe_runner_isolation(isolation, kernel.language)},
                 {"secret_seed", checks.secret_seed},
                 {"determinism", checks.determinism},
                 {"trivial_output_audit", checks.trivial_output_audit},
                 {"run_timeout_ms", isolation.timeout.count()}};
  if (timing) j["timing"] = *timing;
  return j.dump(2);
}

int verify_kernel(const VerifyCommandOptions& options) {
  // A seed on the command line is a secret from the kernels this command starts: gone from
  // what /proc shows before any of them runs.
  if (options.seed) harness::hide_option_value_in_command_line("--seed");
  std::string label;
  ir::PrimFunc func = options.source.load(&label);
  harness::IsolatedKernel kernel = read_kernel(options);
  harness::IsolationOptions isolation = isolation_options(options);
  if (options.seed && kernel.language == harness::KernelLanguage::kCpu &&
      !harness::uses_runner_namespaces(isolation, kernel.language)) {
    std::fprintf(stderr,
                 "warning: runs without namespaces of their own (%s): the kernel can read the command lines of the "
                 "processes that started this one, and a shell that did not exec dragon keeps --seed in its own; "
                 "leave --seed out for a secret seed\n",
                 harness::describe_runner_isolation(isolation, kernel.language).c_str());
  }
  compile_first(kernel, isolation);
  if (kernel.language == harness::KernelLanguage::kCuda && !runtime::cuda_device_available()) {
    std::string cpu_variant = std::filesystem::path(options.kernel_file).replace_extension(".cc").string();
    std::string suggestion = std::filesystem::is_regular_file(cpu_variant)
                                 ? fmt::format("--kernel {}", cpu_variant)
                                 : "a .cc file, docs/kernel-calling-convention.md";
    throw UserError(fmt::format("{} compiles, but this machine has no CUDA device to run it on; run it on a "
                                "machine with a GPU, or verify the kernel's C++ variant for the CPU here ({})",
                                options.kernel_file, suggestion));
  }

  harness::VerifyOptions verify_options;
  verify_options.seed = options.seed;
  std::unique_ptr<harness::Candidate> candidate = harness::make_isolated_candidate(kernel, isolation);
  harness::Verdict verdict = harness::verify(func, *candidate, verify_options);
  ChecksRun checks = describe_checks(verify_options, verdict);

  // Only a kernel that computes the right thing is worth a time.
  std::optional<harness::IsolatedTiming> timing;
  if (options.time && verdict.passed) {
    harness::TimingRequest request;
    request.seed = options.seed;
    request.reference = verify_options.reference;
    request.isolation = isolation;
    timing = harness::time_isolated_kernel(kernel, func, request);
  }
  std::optional<nlohmann::json> timing_object;
  if (timing) {
    timing_object = timing_json(*timing);
  } else if (options.time) {
    timing_object = nlohmann::json{{"outcome", "not_timed"}, {"ok", false}, {"reason", "the kernel failed verification"}};
  }

  if (options.json) {
    std::printf("%s\n", verdict_json(verdict, checks, kernel, isolation, timing_object).c_str());
  } else {
    std::printf("%s\n%s\n", checks_text(checks, kernel, isolation).c_str(), verdict.to_text().c_str());
    if (timing) std::printf("timing: %s\n", timing->describe().c_str());
    if (!verdict.passed) {
      if (options.time) std::printf("not timed: the kernel failed verification\n");
      std::printf("rejected; reproduce with --seed %llu\n", static_cast<unsigned long long>(verdict.seed));
    } else if (timing && !timing->ok()) {
      std::printf("rejected by timing; reproduce with --seed %llu\n", static_cast<unsigned long long>(timing->seed));
    } else if (verdict.problem_weak()) {
      std::printf("passed, but not trusted: the problem is weak (see above); verify on a larger or harder spec\n");
    }
  }
  return verdict.trusted() && (!timing || timing->ok()) ? 0 : 1;
}

}  // namespace

Command add_verify_command(CLI::App& app) {
  auto options = std::make_shared<VerifyCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Verify an external kernel (FILE.cc for the CPU, FILE.cu for CUDA) against an op spec's reference, "
                "each run isolated in a child process; exit 0 only if it passes every check");
  options->source.add_options(sub);
  sub->add_option("--kernel", options->kernel_file,
                  "The kernel file: .cc/.cpp/.cxx (C++ for the CPU) or .cu (CUDA); see "
                  "docs/kernel-calling-convention.md")
      ->required();
  sub->add_option("--entry", options->entry, "The kernel's extern \"C\" entry function")->capture_default_str();
  sub->add_option("--grid", options->grid, "CUDA: grid extents X[,Y[,Z]] of the one launch");
  sub->add_option("--block", options->block, "CUDA: block extents X[,Y[,Z]] of the one launch");
  sub->add_option("--shared", options->shared_bytes, "CUDA: dynamic shared memory bytes of the launch");
  sub->add_option("--seed", options->seed, "Base seed of the input sets (default: a secret random one)");
  sub->add_option("--timeout", options->timeout_seconds, "Time limit of one run, in seconds")->capture_default_str();
  sub->add_flag("--json", options->json, "Print the verdict as JSON");
  sub->add_flag("--time", options->time,
                "CUDA: after a pass, time the kernel in a runner child (CUDA events, L2 flushed, input sets rotated, "
                "every timed call's outputs checked, physics floor); prints median, spread, calls, GPU state, floor");
  return [options] { return verify_kernel(*options); };
}

}  // namespace dragon::cli
