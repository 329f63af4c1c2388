// dragon run: execute an op spec (or IR file) on the reference interpreter with
// deterministic inputs and print output checksums and time; with --script, run the
// scheduled function too and check it against the unscheduled one.
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/interp/tensor_summary.h"
#include "dragon/support/error.h"
#include "function_source.h"
#include "script_source.h"

namespace dragon::cli {
namespace {

struct RunOptions {
  FunctionSource source;
  std::string script;
  uint64_t seed = 1;
  std::string distribution = "normal";
  bool json = false;
};

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(value));
  return text;
}

int run(const RunOptions& options) {
  auto distribution = interp::parse_distribution(options.distribution);
  if (!distribution) {
    throw UserError("unknown distribution '" + options.distribution + "'; valid: " +
                    std::string(interp::distribution_names()));
  }
  std::string label;
  ir::PrimFunc original = options.source.load(&label);
  ir::PrimFunc func = options.script.empty() ? original : apply_script_file(original, options.script);
  std::vector<interp::HostTensor> args = interp::make_arguments(func, options.seed, *distribution);
  // The unscheduled function on the same inputs is the reference for a scheduled one.
  std::vector<interp::HostTensor> reference_args = args;

  auto start = std::chrono::steady_clock::now();
  interp::CompiledFunction compiled = interp::CompiledFunction::compile(func);
  double compile_ms = milliseconds_since(start);
  start = std::chrono::steady_clock::now();
  compiled.run(args);
  double run_ms = milliseconds_since(start);

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
    std::printf("%s\n", out.dump(2).c_str());
    if (!mismatch.empty()) throw UserError("the scheduled function differs from the unscheduled one:" + mismatch);
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
  if (!options.script.empty()) {
    if (!mismatch.empty()) throw UserError("the scheduled function differs from the unscheduled one:" + mismatch);
    std::printf("script %s: outputs match the unscheduled function\n", options.script.c_str());
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run an op spec or IR file on the reference interpreter");
  options->source.add_options(sub);
  sub->add_option("--script", options->script,
                  "Apply this schedule script (TVM-layout JSON trace) and check against the unscheduled function");
  sub->add_option("--seed", options->seed, "Seed of the deterministic inputs")->capture_default_str();
  sub->add_option("--dist", options->distribution, "Input distribution: normal, uniform, rand, offset, edge")
      ->capture_default_str();
  sub->add_flag("--json", options->json, "Print JSON");
  return [options] { return run(*options); };
}

}  // namespace dragon::cli
