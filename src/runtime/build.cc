// Executables (build.h) over compile.h's builds, and the argument checks both kinds share.
#include "dragon/runtime/build.h"

#include "cpu_executable.h"
#include "cuda_executable.h"
#include "dragon/codegen/cpu_codegen.h"
#include "dragon/support/error.h"

namespace dragon::runtime {

Status Executable::check_arguments(const std::vector<tensor::HostTensor>& args) const {
  const auto& params = lowered_->params;
  if (args.size() != params.size()) {
    return DRAGON_RUNTIME_FAILURE("run", fmt::format("{} takes {} arguments, got {}", lowered_->name, params.size(),
                                                     args.size()), "");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Buffer& b = params[i].buffer;
    if (args[i].dtype() != b->dtype || args[i].num_elements() != b->num_elements()) {
      return DRAGON_RUNTIME_FAILURE("run", fmt::format("argument {} ({}) should hold {} elements of {}", i, b->name,
                                                       b->num_elements(), ir::to_string(b->dtype)), "");
    }
  }
  return {};
}

Expected<std::unique_ptr<Executable>> build(const ir::PrimFunc& scheduled, const lower::Target& target,
                                            const BuildOptions& options) {
  Expected<Compiled> compiled = compile(scheduled, target, options);
  if (!compiled) return compiled.error();
  Compiled& c = compiled.value();
  if (target.is_gpu()) return std::unique_ptr<Executable>(new CudaExecutable(c.lowered, std::move(c.cuda())));
  const CpuBuild& cpu = c.cpu();
  return std::unique_ptr<Executable>(new CpuExecutable(c.lowered, cpu.source.code, cpu.module, cpu.entry));
}

Expected<std::unique_ptr<Executable>> build_lowered(const ir::PrimFunc& flat, const lower::Target& target,
                                                    const BuildOptions& options) {
  if (!target.is_gpu()) {
    std::vector<Expected<std::unique_ptr<Executable>>> batch = build_cpu_batch({flat}, options);
    return std::move(batch[0]);
  }
  std::vector<Expected<CudaBuild>> compiled = compile_cuda_all({flat}, target, options);
  if (!compiled[0]) return compiled[0].error();
  return std::unique_ptr<Executable>(new CudaExecutable(flat, std::move(compiled[0].value())));
}

std::vector<Expected<std::unique_ptr<Executable>>> build_cpu_batch(const std::vector<ir::PrimFunc>& flats,
                                                                   const BuildOptions& options) {
  std::string source;
  std::vector<std::string> entries;
  for (size_t i = 0; i < flats.size(); ++i) {
    codegen::CpuCodegenOptions cg;
    cg.entry_name = flats.size() == 1 ? "dragon_entry" : "dragon_entry_" + std::to_string(i);
    codegen::CpuSource cpu = codegen::generate_cpu(flats[i], cg);
    source += cpu.code;
    entries.push_back(cpu.entry_name);
  }
  Expected<std::shared_ptr<CpuModule>> module = CpuModule::compile(source, options.cpu, options.compile_cache());
  std::vector<Expected<std::unique_ptr<Executable>>> result;
  for (size_t i = 0; i < flats.size(); ++i) {
    if (!module) {
      result.emplace_back(module.error());
      continue;
    }
    Expected<CpuEntry> entry = module.value()->entry(entries[i]);
    if (!entry) {
      result.emplace_back(entry.error());
      continue;
    }
    result.emplace_back(std::unique_ptr<Executable>(
        new CpuExecutable(flats[i], source, module.value(), entry.value())));
  }
  return result;
}

}  // namespace dragon::runtime
