// The build driver (build.h): lowering, code generation and compilation for both
// targets, and the argument checks both executables share.
#include "dragon/runtime/build.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "cpu_executable.h"
#include "cuda_executable.h"
#include "dragon/codegen/cpu_codegen.h"
#include "dragon/lower/lower.h"
#include "dragon/support/error.h"

namespace dragon::runtime {
namespace {

CompileCache& cache_of(const BuildOptions& options) {
  return options.cache != nullptr ? *options.cache : CompileCache::global();
}

NvrtcOptions nvrtc_options(const BuildOptions& options, const lower::Target& target) {
  NvrtcOptions nvrtc = options.nvrtc;
  if (!target.arch.empty()) nvrtc.arch = target.arch;
  return nvrtc;
}

// The same function under the name "b<position>_<name>": the prefix "b<digits>_" differs
// for every position and none is a prefix of another, and the emitter names kernels
// "<function>_kernel<k>" (plus a suffix at most), so members' entries cannot clash.
ir::PrimFunc batch_member(const ir::PrimFunc& flat, size_t position) {
  return ir::PrimFunc::make(fmt::format("b{}_{}", position, flat->name), flat->params, flat->body, flat->attrs);
}

// One translation unit for several functions: one prelude, then each member's kernels.
// The emitter's preludes differ only in the tensor-core helpers it appends to the common
// part, so the longest prelude holds every other one as a prefix and serves all members.
std::string batch_program(const std::vector<codegen::CudaSource>& sources, size_t begin, size_t end) {
  std::string_view prelude;
  for (size_t i = begin; i < end; ++i) {
    if (sources[i].prelude_size > prelude.size()) prelude = std::string_view(sources[i].code).substr(0, sources[i].prelude_size);
  }
  std::string code(prelude);
  for (size_t i = begin; i < end; ++i) {
    std::string_view own = std::string_view(sources[i].code).substr(0, sources[i].prelude_size);
    DRAGON_CHECK(prelude.starts_with(own), "the CUDA prelude of batch member {} is not a prefix of the batch's", i);
    code.append(sources[i].code, sources[i].prelude_size);
  }
  return code;
}

}  // namespace

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
  lower::Lowered lowered = lower::lower(scheduled, target);
  return build_lowered(lowered.func, target, options);
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
  Expected<std::shared_ptr<CpuModule>> module = CpuModule::compile(source, options.cpu, cache_of(options));
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

std::vector<Expected<CudaBuild>> compile_cuda_all(const std::vector<ir::PrimFunc>& flats, const lower::Target& target,
                                                  const BuildOptions& options) {
  std::vector<codegen::CudaSource> sources;
  std::vector<std::string> codes;
  for (const ir::PrimFunc& flat : flats) {
    sources.push_back(codegen::generate_cuda(flat, target));
    codes.push_back(sources.back().code);
  }
  std::vector<Expected<Cubin>> cubins = nvrtc_compile_all(codes, nvrtc_options(options, target), cache_of(options),
                                                        options.nvrtc_threads);
  std::vector<Expected<CudaBuild>> result;
  for (size_t i = 0; i < flats.size(); ++i) {
    if (!cubins[i]) {
      result.emplace_back(cubins[i].error());
    } else {
      result.emplace_back(CudaBuild{std::move(sources[i]), std::move(cubins[i].value())});
    }
  }
  return result;
}

std::vector<Expected<CudaBuild>> compile_cuda_batch(const std::vector<ir::PrimFunc>& flats,
                                                    const lower::Target& target, const BuildOptions& options,
                                                    int functions_per_program) {
  if (functions_per_program < 1) {
    throw UserError(fmt::format("compile_cuda_batch: functions_per_program is {}, it must be at least 1",
                                functions_per_program));
  }
  const size_t per_program = static_cast<size_t>(functions_per_program);
  struct Program {
    size_t begin, end;  // members flats[begin, end)
  };
  std::vector<Program> programs;
  for (size_t begin = 0; begin < flats.size(); begin += per_program) {
    programs.push_back({begin, std::min(begin + per_program, flats.size())});
  }
  std::vector<codegen::CudaSource> sources;
  sources.reserve(flats.size());
  std::vector<std::string> codes;
  for (const Program& program : programs) {
    for (size_t i = program.begin; i < program.end; ++i) {
      sources.push_back(program.end - program.begin == 1
                            ? codegen::generate_cuda(flats[i], target)
                            : codegen::generate_cuda(batch_member(flats[i], i - program.begin), target));
    }
    codes.push_back(batch_program(sources, program.begin, program.end));
  }
  const NvrtcOptions nvrtc = nvrtc_options(options, target);
  std::vector<Expected<Cubin>> cubins = nvrtc_compile_all(codes, nvrtc, cache_of(options), options.nvrtc_threads);

  // A rejected program of several members says nothing about which member broke it (and a
  // log mixing them is hard to read), so each member of such a program is compiled again
  // alone, under the same entry names; its own result, success or failure, is what it gets.
  std::vector<size_t> retried;
  std::vector<std::string> retried_codes;
  for (size_t p = 0; p < programs.size(); ++p) {
    if (cubins[p] || programs[p].end - programs[p].begin == 1) continue;
    for (size_t i = programs[p].begin; i < programs[p].end; ++i) {
      retried.push_back(i);
      retried_codes.push_back(sources[i].code);
    }
  }
  std::vector<Expected<Cubin>> alone = nvrtc_compile_all(retried_codes, nvrtc, cache_of(options), options.nvrtc_threads);

  std::vector<std::optional<Expected<Cubin>>> cubin_of(flats.size());
  for (size_t r = 0; r < retried.size(); ++r) cubin_of[retried[r]].emplace(std::move(alone[r]));
  std::vector<Expected<CudaBuild>> result;
  result.reserve(flats.size());
  for (size_t p = 0; p < programs.size(); ++p) {
    for (size_t i = programs[p].begin; i < programs[p].end; ++i) {
      Expected<Cubin>& cubin = cubin_of[i] ? *cubin_of[i] : cubins[p];
      if (!cubin) {
        result.emplace_back(cubin.error());
      } else {
        result.emplace_back(CudaBuild{std::move(sources[i]), cubin.value()});
      }
    }
  }
  return result;
}

}  // namespace dragon::runtime
