// dragon run: execute an op spec (or IR file) on the reference interpreter with
// deterministic inputs and print output checksums and time; with --script, run the
// scheduled function too and check it against the unscheduled one.
#include <chrono>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/interp/tensor_summary.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/script/script_file.h"
#include "dragon/search/default_schedule.h"
#include "dragon/support/error.h"
#include "function_source.h"
#include "time_on_gpu.h"

namespace dragon::cli {
namespace {

struct RunOptions {
  FunctionSource source;
  std::string script;
  uint64_t seed = 1;
  std::string distribution = "normal";
  bool json = false;
  std::string target = "interp";  // or a target's name (lower::Target::names()): also run generated code
  bool time = false;              // cuda: also time the kernels with the harness's timer
};

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// --target: the function compiled for `target` runs on `inputs`; its outputs must match
// the interpreter's (`expected`) within a few times the reordering tolerance (the C and
// CUDA math libraries differ from the interpreter's double-then-round by an ulp or so).
struct TargetRun {
  double build_ms = 0, run_ms = 0;
  bool from_cache = false;
  std::string mismatch;
};

TargetRun run_on_target(const ir::PrimFunc& func, const lower::Target& target, const std::string& target_name,
                        std::vector<tensor::HostTensor> inputs, const std::vector<tensor::HostTensor>& expected) {
  if (target.is_gpu()) {
    // Said before anything is built: NVRTC would compile, and only the launch would fail.
    if (auto driver = runtime::CudaDriver::get(); !driver.ok()) {
      throw UserError("--target cuda needs a CUDA device and there is none here (" + driver.error().message +
                      "); `dragon build --target cuda --emit cubin` compiles without one");
    }
  }
  TargetRun result;
  auto start = std::chrono::steady_clock::now();
  auto exe = runtime::build(func, target);
  if (!exe.ok()) throw UserError("--target " + target_name + ": " + exe.error().describe());
  result.build_ms = milliseconds_since(start);
  result.from_cache = exe.value()->from_cache();
  start = std::chrono::steady_clock::now();
  Status status = exe.value()->run(inputs);
  if (!status.ok()) throw UserError("--target " + target_name + ": " + status.error().describe());
  result.run_ms = milliseconds_since(start);
  for (size_t i = 0; i < func->params.size(); ++i) {
    if (func->params[i].role == ir::ParamRole::kInput) continue;
    interp::TensorComparison c =
        interp::compare_tensors(expected[i], inputs[i], 4 * interp::reordering_tolerance(inputs[i].dtype()));
    if (!c.ok) result.mismatch += "\n" + func->params[i].buffer->name + ": " + interp::describe(c, expected[i], inputs[i]);
  }
  return result;
}

void check_target_run(const RunOptions& options, const std::optional<TargetRun>& target_run) {
  if (target_run && !target_run->mismatch.empty()) {
    throw UserError("--target " + options.target + ": the generated code differs from the interpreter:" +
                    target_run->mismatch);
  }
}

int run(const RunOptions& options) {
  auto distribution = interp::parse_distribution(options.distribution);
  if (!distribution) {
    throw UserError("unknown distribution '" + options.distribution + "'; valid: " +
                    std::string(interp::distribution_names()));
  }
  std::string label;
  ir::PrimFunc original = options.source.load(&label);
  ir::PrimFunc func = options.script.empty() ? original : script::replay(original, script::load(options.script)).func();
  std::vector<tensor::HostTensor> args = interp::make_arguments(func, options.seed, *distribution);
  // The unscheduled function on the same inputs is the reference for a scheduled one.
  std::vector<tensor::HostTensor> reference_args = args;
  std::vector<tensor::HostTensor> target_inputs = args;

  auto start = std::chrono::steady_clock::now();
  interp::CompiledFunction compiled = interp::CompiledFunction::compile(func);
  double compile_ms = milliseconds_since(start);
  start = std::chrono::steady_clock::now();
  compiled.run(args);
  double run_ms = milliseconds_since(start);
  std::optional<TargetRun> target_run;
  const std::optional<lower::Target> target = lower::Target::from_name(options.target);  // nullopt: interp
  if (options.time && !(target && target->is_gpu())) {
    throw UserError("--time times kernels on the GPU: give --target cuda");
  }
  std::optional<harness::GpuTiming> gpu_timing;
  if (target) {
    // On the GPU, nests the script left unbound (all of them without one) get the
    // untuned default schedule.
    ir::PrimFunc target_func = target->is_gpu() ? search::default_schedule(func, *target).func() : func;
    target_run = run_on_target(target_func, *target, options.target, target_inputs, args);
    // Timed only once the outputs were found right.
    if (options.time && target_run->mismatch.empty()) gpu_timing = time_on_gpu(target_func, *target, target_inputs);
  }

  std::string mismatch;
  if (!options.script.empty()) {
    interp::run(original, reference_args);
    for (size_t i = 0; i < func->params.size(); ++i) {
      if (func->params[i].role == ir::ParamRole::kInput) continue;
      interp::TensorComparison c = interp::compare_tensors(
          reference_args[i], args[i], interp::reordering_tolerance(args[i].dtype()));
      if (!c.ok) {
        mismatch += "\n" + func->params[i].buffer->name + ": " + interp::describe(c, reference_args[i], args[i]);
      }
    }
  }

  nlohmann::json outputs = nlohmann::json::array();
  for (size_t i = 0; i < func->params.size(); ++i) {
    const ir::Param& param = func->params[i];
    if (param.role == ir::ParamRole::kInput) continue;
    interp::TensorSummary s = interp::summarize(args[i]);
    outputs.push_back({{"name", param.buffer->name},
                       {"type", interp::describe_type(args[i])},
                       {"sum", s.sum},
                       {"mean_abs", s.mean_abs},
                       {"min", s.min},
                       {"max", s.max},
                       {"nan_count", s.nan_count},
                       {"fingerprint", hex(s.fingerprint)}});
  }
  if (options.json) {
    nlohmann::json out = {{"function", label},
                          {"script", options.script},
                          {"matches_unscheduled", options.script.empty() ? nlohmann::json(nullptr)
                                                                          : nlohmann::json(mismatch.empty())},
                          {"seed", options.seed},
                          {"distribution", options.distribution},
                          {"outputs", outputs},
                          {"compile_ms", compile_ms},
                          {"run_ms", run_ms}};
    if (target_run) {
      out["target"] = {{"name", options.target},
                       {"build_ms", target_run->build_ms},
                       {"run_ms", target_run->run_ms},
                       {"from_cache", target_run->from_cache},
                       {"matches_interpreter", target_run->mismatch.empty()}};
    }
    if (gpu_timing) {
      out["gpu_timing"] = {{"median_ms", gpu_timing->median_ms}, {"min_ms", gpu_timing->min_ms},
                           {"max_ms", gpu_timing->max_ms},       {"ci95_ms", gpu_timing->ci95_half_width_ms},
                           {"calls", gpu_timing->samples_ms.size()}, {"converged", gpu_timing->converged},
                           {"gpu", harness::read_gpu_state().describe()}};
    }
    std::printf("%s\n", out.dump(2).c_str());
    if (!mismatch.empty()) throw UserError("the scheduled function differs from the unscheduled one:" + mismatch);
    check_target_run(options, target_run);
    return 0;
  }
  std::printf("%s\n", label.c_str());
  std::printf("inputs: seed %llu, distribution %s\n", static_cast<unsigned long long>(options.seed),
              options.distribution.c_str());
  for (const auto& o : outputs) {
    std::printf("output %s: %s  sum %.9g  mean|x| %.9g  min %.9g  max %.9g  NaN %lld  fingerprint %s\n",
                o["name"].get<std::string>().c_str(), o["type"].get<std::string>().c_str(), o["sum"].get<double>(),
                o["mean_abs"].get<double>(), o["min"].get<double>(), o["max"].get<double>(),
                static_cast<long long>(o["nan_count"].get<int64_t>()), o["fingerprint"].get<std::string>().c_str());
  }
  std::printf("interpreter: %.3f ms (compile %.3f ms)\n", run_ms, compile_ms);
  if (target_run) {
    std::printf("%s: %.3f ms (build %.3f ms%s)%s\n", options.target.c_str(), target_run->run_ms, target_run->build_ms,
                target_run->from_cache ? ", cached" : "",
                target_run->mismatch.empty() ? "; outputs match the interpreter" : "");
  }
  if (gpu_timing) {
    std::printf("cuda kernels: %s on %s\n", gpu_timing->describe().c_str(), harness::read_gpu_state().describe().c_str());
  }
  if (!options.script.empty()) {
    if (!mismatch.empty()) throw UserError("the scheduled function differs from the unscheduled one:" + mismatch);
    std::printf("script %s: outputs match the unscheduled function\n", options.script.c_str());
  }
  check_target_run(options, target_run);
  return 0;
}

// --target's choices: the interpreter alone, or a target.
std::vector<std::string> run_targets() {
  std::vector<std::string> names = {"interp"};
  for (const std::string& name : lower::Target::names()) names.push_back(name);
  return names;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run an op spec or IR file on the reference interpreter");
  options->source.add_options(sub);
  sub->add_option("--script", options->script,
                  "Apply this schedule script (compact or TVM-layout JSON) and check against the unscheduled function");
  sub->add_option("--seed", options->seed, "Seed of the deterministic inputs")->capture_default_str();
  sub->add_option("--dist", options->distribution, "Input distribution: normal, uniform, rand, offset, edge")
      ->capture_default_str();
  sub->add_flag("--json", options->json, "Print JSON");
  sub->add_option("--target", options->target,
                  "interp: the reference interpreter only; cpu or cuda: also lower, compile and run generated code "
                  "on the same inputs, checked against the interpreter")
      ->check(CLI::IsMember(run_targets()))
      ->capture_default_str();
  sub->add_flag("--time", options->time,
                "With --target cuda: time the kernels on the GPU (CUDA events, L2 flushed, repeated until the 95% "
                "confidence interval is within 1%) once their outputs match");
  return [options] { return run(*options); };
}

}  // namespace dragon::cli
