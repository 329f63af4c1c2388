// dragon run: execute an op spec (or IR file) on the reference interpreter with
// deterministic inputs and print output checksums and time.
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_summary.h"
#include "dragon/support/error.h"
#include "function_source.h"

namespace dragon::cli {
namespace {

struct RunOptions {
  FunctionSource source;
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
  ir::PrimFunc func = options.source.load(&label);
  std::vector<interp::HostTensor> args = interp::make_arguments(func, options.seed, *distribution);

  auto start = std::chrono::steady_clock::now();
  interp::CompiledFunction compiled = interp::CompiledFunction::compile(func);
  double compile_ms = milliseconds_since(start);
  start = std::chrono::steady_clock::now();
  compiled.run(args);
  double run_ms = milliseconds_since(start);

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
                          {"seed", options.seed},
                          {"distribution", options.distribution},
                          {"outputs", outputs},
                          {"compile_ms", compile_ms},
                          {"run_ms", run_ms}};
    std::printf("%s\n", out.dump(2).c_str());
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
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run an op spec or IR file on the reference interpreter");
  options->source.add_options(sub);
  sub->add_option("--seed", options->seed, "Seed of the deterministic inputs")->capture_default_str();
  sub->add_option("--dist", options->distribution, "Input distribution: normal, uniform, rand, offset, edge")
      ->capture_default_str();
  sub->add_flag("--json", options->json, "Print JSON");
  return [options] { return run(*options); };
}

}  // namespace dragon::cli
