// dragon build: an op spec (or IR file), optionally scheduled by a script, lowered for a
// target and printed as generated source or compiled into its artifact: a CUBIN (NVRTC,
// no GPU needed) or a shared object (the system C++ compiler).
#include <unistd.h>

#include <cstdio>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/compile.h"
#include "dragon/script/script_file.h"
#include "dragon/search/default_schedule.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "function_source.h"

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

// The CUBIN, or the shared object's bytes.
std::string artifact(const ir::PrimFunc& func, const lower::Target& target) {
  Expected<runtime::Compiled> compiled = runtime::compile(func, target);
  if (!compiled.ok()) {
    throw UserError((target.is_gpu() ? "NVRTC: " : "the C++ compiler: ") + compiled.error().describe());
  }
  if (target.is_gpu()) return compiled.value().cuda().cubin.bytes;
  return read_text_file(compiled.value().cpu().module->path());
}

// Each kernel's launch, as comments after the CUDA source: the grid, block and dynamic shared
// memory, and what each parameter is bound to, which one needs to run the printed kernel
// outside Little Dragon (a profiler, `dragon verify --kernel`) and the source does not say.
std::string launch_comments(const codegen::CudaSource& source, const ir::PrimFunc& lowered) {
  std::string text = "\n// Launches, in order (grid x,y,z; block x,y,z; dynamic shared memory in bytes):\n";
  for (const codegen::KernelLaunch& k : source.kernels) {
    text += fmt::format("//   {}: --grid {},{},{} --block {},{},{} --shared {}\n", k.name, k.grid[0], k.grid[1],
                        k.grid[2], k.block[0], k.block[1], k.block[2], k.dynamic_shared_bytes);
    std::vector<std::string> args;
    for (const codegen::KernelArg& arg : k.args) {
      if (arg.kind == codegen::KernelArg::Kind::kWorkspace) {
        const codegen::Workspace& w = source.workspaces.at(static_cast<size_t>(arg.index));
        args.push_back(fmt::format("{} workspace of {} bytes", w.name, w.bytes));
      } else {
        const ir::Buffer& b = lowered->params.at(static_cast<size_t>(arg.index)).buffer;
        args.push_back(fmt::format("{} {}[{}]", b->name, ir::to_string(b->dtype), fmt::join(b->shape, ", ")));
      }
    }
    text += fmt::format("//     arguments: {}\n", fmt::join(args, "; "));
  }
  return text;
}

int build(const BuildOptions& options) {
  const lower::Target target = *lower::Target::from_name(options.target);  // checked by the parser
  if (options.emit == "cubin" && !target.is_gpu()) {
    throw UserError("--emit cubin needs --target cuda (got --target " + options.target + ")");
  }
  if (options.emit == "so" && target.is_gpu()) {
    throw UserError("--emit so needs --target cpu (got --target " + options.target + ")");
  }
  ir::PrimFunc func = options.source.load();
  if (!options.script.empty()) func = script::replay(func, script::load(options.script)).func();
  // Nests left unbound get the untuned default GPU schedule (a no-op on the CPU).
  func = search::default_schedule(func, target).func();
  if (options.emit == "source") {
    const runtime::Generated generated = runtime::generate(func, target);
    std::string text = generated.code();
    if (const auto* cuda = std::get_if<codegen::CudaSource>(&generated.source)) text += launch_comments(*cuda, generated.lowered);
    write_output(options, text, false);
  } else {
    write_output(options, artifact(func, target), true);
  }
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
      ->check(CLI::IsMember(lower::Target::names()));
  sub->add_option("--emit", options->emit,
                  "source: the generated CUDA or C++; cubin: NVRTC's CUBIN (cuda, no GPU needed); so: a shared "
                  "object (cpu)")
      ->check(CLI::IsMember({"source", "cubin", "so"}))
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write to this file instead of stdout");
  return [options] { return build(*options); };
}

}  // namespace dragon::cli
