// dragon build: an op spec (or IR file), optionally scheduled by a script, lowered for a
// target and printed as generated source or compiled into its artifact: a CUBIN (NVRTC,
// no GPU needed) or a shared object (the system C++ compiler).
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "dragon/codegen/cpu_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/cpu_module.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "function_source.h"
#include "script_source.h"

namespace dragon::cli {
namespace {

struct BuildOptions {
  FunctionSource source;
  std::string script;
  std::string target;
  std::string emit = "source";
  std::string output;  // empty: stdout
};

// The artifact's bytes go to -o, or to stdout when that is not a terminal (a CUBIN or a
// shared object printed on a terminal helps nobody).
void write_output(const BuildOptions& options, std::string_view bytes, bool binary) {
  if (!options.output.empty()) {
    write_text_file(options.output, bytes);
    std::fprintf(stderr, "wrote %s (%zu bytes)\n", options.output.c_str(), bytes.size());
    return;
  }
  if (binary && ::isatty(STDOUT_FILENO)) {
    throw UserError("--emit " + options.emit + " writes binary data: give -o FILE or redirect stdout");
  }
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
}

std::string cuda_artifact(const BuildOptions& options, const ir::PrimFunc& flat, const lower::Target& target) {
  if (options.emit == "source") return codegen::generate_cuda(flat, target).code;
  std::vector<Expected<runtime::CudaBuild>> builds = runtime::compile_cuda_all({flat}, target);
  if (!builds[0].ok()) throw UserError("NVRTC: " + builds[0].error().describe());
  return builds[0].value().cubin.bytes;
}

std::string cpu_artifact(const BuildOptions& options, const ir::PrimFunc& flat) {
  codegen::CpuSource source = codegen::generate_cpu(flat);
  if (options.emit == "source") return source.code;
  runtime::CpuCompileOptions compile;
  auto module = runtime::CpuModule::compile(source.code, compile, runtime::CompileCache::global());
  if (!module.ok()) throw UserError("the C++ compiler: " + module.error().describe());
  return read_text_file(module.value()->path());
}

int build(const BuildOptions& options) {
  const bool cuda = options.target == "cuda";
  if (options.emit == "cubin" && !cuda) throw UserError("--emit cubin needs --target cuda (got --target cpu)");
  if (options.emit == "so" && cuda) throw UserError("--emit so needs --target cpu (got --target cuda)");
  ir::PrimFunc func = options.source.load();
  if (!options.script.empty()) func = apply_script_file(func, options.script);
  lower::Target target = cuda ? lower::Target::cuda_h200() : lower::Target::cpu();
  ir::PrimFunc flat = lower::lower(func, target).func;
  std::string bytes = cuda ? cuda_artifact(options, flat, target) : cpu_artifact(options, flat);
  write_output(options, bytes, options.emit != "source");
  return 0;
}

}  // namespace

Command add_build_command(CLI::App& app) {
  auto options = std::make_shared<BuildOptions>();
  CLI::App* sub = app.add_subcommand(
      "build", "Lower an op spec or IR file (optionally scheduled by --script) and print its generated code or "
               "write its compiled artifact");
  options->source.add_options(sub);
  sub->add_option("--script", options->script, "Apply this schedule script (compact or TVM-layout JSON) first");
  sub->add_option("--target", options->target, "Generate code for cuda (sm_90a, an H200) or cpu")
      ->required()
      ->check(CLI::IsMember({"cuda", "cpu"}));
  sub->add_option("--emit", options->emit,
                  "source: the generated CUDA or C++; cubin: NVRTC's CUBIN (cuda, no GPU needed); so: a shared "
                  "object (cpu)")
      ->check(CLI::IsMember({"source", "cubin", "so"}))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write to this file instead of stdout");
  return [options] { return build(*options); };
}

}  // namespace dragon::cli
