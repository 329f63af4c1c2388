// compile.h: generation for both targets, the compiler runs behind compile(), and NVRTC's
// batched forms.
#include "dragon/runtime/compile.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "dragon/lower/lower.h"
#include "dragon/support/error.h"

namespace dragon::runtime {
namespace {

NvrtcOptions nvrtc_options(const BuildOptions& options, const lower::Target& target) {
  NvrtcOptions nvrtc = options.nvrtc;
  if (!target.arch.empty()) nvrtc.arch = target.arch;
  return nvrtc;
}

// Each source compiled as its own NVRTC program.
std::vector<Expected<CudaBuild>> compile_cuda_sources(std::vector<codegen::CudaSource> sources,
                                                      const lower::Target& target, const BuildOptions& options) {
  std::vector<std::string> codes;
  codes.reserve(sources.size());
  for (const codegen::CudaSource& source : sources) codes.push_back(source.code);
  std::vector<Expected<Cubin>> cubins =
      nvrtc_compile_all(codes, nvrtc_options(options, target), options.compile_cache(), options.nvrtc_threads);
  std::vector<Expected<CudaBuild>> result;
  result.reserve(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!cubins[i]) {
      result.emplace_back(cubins[i].error());
    } else {
      result.emplace_back(CudaBuild{std::move(sources[i]), std::move(cubins[i].value())});
    }
  }
  return result;
}

// The same function under the name "b<position>_<name>": the prefix "b<digits>_" differs
// for every position and none is a prefix of another, and the emitter names kernels
// "<function>_kernel<k>" (plus a suffix at most), so members' entries cannot clash.
ir::PrimFunc batch_member(const ir::PrimFunc& flat, size_t position) {
  return ir::PrimFunc::make(fmt::format("b{}_{}", position, flat->name), flat->params, flat->body, flat->attrs);
}

// One translation unit for several functions: one prelude, then each member's kernels.
// The prelude is the union of the members' prelude parts (codegen::PreludePart): a part
// of one name has one text, so every member finds its own parts, in their order, with
// others' between them (f32-only members lack the fp16 headers, tensor-core ones add
// their helpers). A member with a part of a name already taken by another text would not
// fit; it is returned in `apart` and compiled alone.
std::string batch_program(const std::vector<codegen::CudaSource>& sources, size_t begin, size_t end,
                          std::vector<size_t>& apart) {
  std::map<std::string, const codegen::PreludePart*> parts;  // by name
  std::vector<size_t> members;
  for (size_t i = begin; i < end; ++i) {
    bool fits = true;
    for (const codegen::PreludePart& part : sources[i].prelude_parts) {
      auto it = parts.find(part.name);
      if (it != parts.end() && (it->second->text != part.text || it->second->rank != part.rank)) fits = false;
    }
    if (!fits) {
      apart.push_back(i);
      continue;
    }
    for (const codegen::PreludePart& part : sources[i].prelude_parts) parts.emplace(part.name, &part);
    members.push_back(i);
  }
  std::vector<codegen::PreludePart> merged;
  for (const auto& [name, part] : parts) merged.push_back(*part);
  std::string code = codegen::join_prelude(std::move(merged));
  for (size_t i : members) code.append(sources[i].code, sources[i].prelude_size);
  return code;
}

}  // namespace

CompileCache& BuildOptions::compile_cache() const { return cache != nullptr ? *cache : CompileCache::global(); }

const std::string& Generated::code() const {
  return std::visit([](const auto& s) -> const std::string& { return s.code; }, source);
}

const std::string& Compiled::source() const {
  return std::visit([](const auto& b) -> const std::string& { return b.source.code; }, build);
}

bool Compiled::from_cache() const {
  if (const CudaBuild* cuda = std::get_if<CudaBuild>(&build)) return cuda->cubin.from_cache;
  return std::get<CpuBuild>(build).module->from_cache();
}

CudaBuild& Compiled::cuda() {
  DRAGON_CHECK(std::holds_alternative<CudaBuild>(build), "the CUDA build of {}, compiled for the CPU", lowered->name);
  return std::get<CudaBuild>(build);
}

const CudaBuild& Compiled::cuda() const { return const_cast<Compiled*>(this)->cuda(); }

const CpuBuild& Compiled::cpu() const {
  DRAGON_CHECK(std::holds_alternative<CpuBuild>(build), "the CPU build of {}, compiled for CUDA", lowered->name);
  return std::get<CpuBuild>(build);
}

Generated generate(const ir::PrimFunc& scheduled, const lower::Target& target) {
  ir::PrimFunc flat = lower::lower(scheduled, target).func;
  if (target.is_gpu()) {
    codegen::CudaSource source = codegen::generate_cuda(flat, target);
    return Generated{std::move(flat), std::move(source)};
  }
  codegen::CpuSource source = codegen::generate_cpu(flat);
  return Generated{std::move(flat), std::move(source)};
}

Expected<Compiled> compile(const ir::PrimFunc& scheduled, const lower::Target& target, const BuildOptions& options) {
  Generated generated = generate(scheduled, target);
  if (auto* cuda = std::get_if<codegen::CudaSource>(&generated.source)) {
    std::vector<codegen::CudaSource> sources;
    sources.push_back(std::move(*cuda));
    std::vector<Expected<CudaBuild>> built = compile_cuda_sources(std::move(sources), target, options);
    if (!built[0]) return built[0].error();
    return Compiled{std::move(generated.lowered), std::move(built[0].value())};
  }
  codegen::CpuSource& source = std::get<codegen::CpuSource>(generated.source);
  Expected<std::shared_ptr<CpuModule>> module = CpuModule::compile(source.code, options.cpu, options.compile_cache());
  if (!module) return module.error();
  Expected<CpuEntry> entry = module.value()->entry(source.entry_name);
  if (!entry) return entry.error();
  return Compiled{std::move(generated.lowered), CpuBuild{std::move(source), module.value(), entry.value()}};
}

std::vector<Expected<CudaBuild>> compile_cuda_all(const std::vector<ir::PrimFunc>& flats, const lower::Target& target,
                                                  const BuildOptions& options) {
  std::vector<codegen::CudaSource> sources;
  sources.reserve(flats.size());
  for (const ir::PrimFunc& flat : flats) sources.push_back(codegen::generate_cuda(flat, target));
  return compile_cuda_sources(std::move(sources), target, options);
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
  std::vector<size_t> apart;  // members whose prelude does not fit their program's: alone
  for (const Program& program : programs) {
    for (size_t i = program.begin; i < program.end; ++i) {
      sources.push_back(program.end - program.begin == 1
                            ? codegen::generate_cuda(flats[i], target)
                            : codegen::generate_cuda(batch_member(flats[i], i - program.begin), target));
    }
    codes.push_back(batch_program(sources, program.begin, program.end, apart));
  }
  // The members apart are compiled alone in the same NVRTC run, after the programs.
  for (size_t i : apart) codes.push_back(sources[i].code);
  const NvrtcOptions nvrtc = nvrtc_options(options, target);
  std::vector<Expected<Cubin>> cubins = nvrtc_compile_all(codes, nvrtc, options.compile_cache(), options.nvrtc_threads);
  std::vector<std::optional<Expected<Cubin>>> cubin_of(flats.size());
  for (size_t a = 0; a < apart.size(); ++a) cubin_of[apart[a]].emplace(std::move(cubins[programs.size() + a]));

  // A rejected program of several members says nothing about which member broke it (and a
  // log mixing them is hard to read), so each member of such a program is compiled again
  // alone, under the same entry names; its own result, success or failure, is what it gets.
  std::vector<size_t> retried;
  std::vector<std::string> retried_codes;
  for (size_t p = 0; p < programs.size(); ++p) {
    if (cubins[p] || programs[p].end - programs[p].begin == 1) continue;
    for (size_t i = programs[p].begin; i < programs[p].end; ++i) {
      if (cubin_of[i]) continue;  // compiled apart already
      retried.push_back(i);
      retried_codes.push_back(sources[i].code);
    }
  }
  std::vector<Expected<Cubin>> alone = nvrtc_compile_all(retried_codes, nvrtc, options.compile_cache(), options.nvrtc_threads);

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
