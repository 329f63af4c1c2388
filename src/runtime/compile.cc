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
// fit; it is left out of `members` (returned in `apart`) to be compiled alone.
// A kernel whose definition is another member's but for its name (candidates of one
// workload often differ in one of their kernels: 66 kernels of 33 distinct softmax
// candidates were 39 distinct ones) is defined once, under the first member's name, and
// `launch_names[member][k]` says which entry member k's kernel is; an empty name is the
// member's own. NVRTC's time follows the kernels it compiles (those 33 candidates: 3.7 s
// in one program, 1.9 s with each kernel once).
std::string batch_program(const std::vector<std::optional<codegen::CudaSource>>& sources, std::vector<size_t>& members,
                          std::vector<size_t>& apart, std::map<size_t, std::vector<std::string>>& launch_names,
                          bool share_kernels) {
  std::map<std::string, const codegen::PreludePart*> parts;  // by name
  std::vector<size_t> fitting;
  for (size_t i : members) {
    bool fits = true;
    for (const codegen::PreludePart& part : sources[i]->prelude_parts) {
      auto it = parts.find(part.name);
      if (it != parts.end() && (it->second->text != part.text || it->second->rank != part.rank)) fits = false;
    }
    if (!fits) {
      apart.push_back(i);
      continue;
    }
    for (const codegen::PreludePart& part : sources[i]->prelude_parts) parts.emplace(part.name, &part);
    fitting.push_back(i);
  }
  std::vector<codegen::PreludePart> merged;
  for (const auto& [name, part] : parts) merged.push_back(*part);
  std::string code = codegen::join_prelude(std::move(merged));
  std::map<std::string, std::string> defined;  // a kernel's definition without its name -> the name it has here
  for (size_t i : fitting) {
    const codegen::CudaSource& source = *sources[i];
    if (!share_kernels || source.kernel_spans.size() != source.kernels.size()) {  // (or not printed by generate_cuda)
      code.append(source.code, source.prelude_size);
      continue;
    }
    std::vector<std::string> names(source.kernels.size());
    size_t at = source.prelude_size;
    for (size_t k = 0; k < source.kernels.size(); ++k) {
      const auto [begin, end] = source.kernel_spans[k];
      code.append(source.code, at, begin - at);  // what lies between kernels (comments)
      at = end;
      auto [it, inserted] = defined.emplace(*codegen::kernel_definition_key(source, k), source.kernels[k].name);
      if (inserted) {
        code.append(source.code, begin, end - begin);
      } else {
        names[k] = it->second;
      }
    }
    code.append(source.code, at);
    if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return !n.empty(); })) {
      launch_names[i] = std::move(names);
    }
  }
  members = std::move(fitting);
  return code;
}

}  // namespace

CompileCache& BuildOptions::compile_cache() const { return cache != nullptr ? *cache : CompileCache::global(); }

const std::string& Generated::code() const {
  return std::visit([](const auto& s) -> const std::string& { return s.code; }, source);
}

std::string Generated::cuda_kernel_hash(std::string_view arch) const {
  return CompileCache::key({"cuda kernel", arch, code()});
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
  std::vector<CudaProgramBatch::Range> ranges;
  for (size_t begin = 0; begin < flats.size(); begin += per_program) {
    ranges.push_back({begin, std::min(begin + per_program, flats.size())});
  }
  CudaProgramBatch batch(flats, target, ranges);
  const NvrtcOptions nvrtc = nvrtc_options(options, target);
  std::vector<std::optional<Expected<CudaBuild>>> built(flats.size());
  // Rounds of NVRTC on the programs not compiled yet: the batch's, then those that
  // printing and rejections added (members alone).
  for (size_t done = 0; done < batch.size();) {
    std::vector<size_t> printed;
    std::vector<std::string> codes;
    std::vector<std::pair<size_t, RuntimeFailure>> unprinted;
    for (size_t p = done; p < batch.size(); ++p) {  // printing may add programs
      try {
        codes.push_back(batch.code(p));
        printed.push_back(p);
      } catch (const Error& e) {
        unprinted.emplace_back(p, DRAGON_RUNTIME_FAILURE("generate_cuda", e.what(), ""));
      }
    }
    const size_t round_end = batch.size();
    std::vector<Expected<Cubin>> cubins = nvrtc_compile_all(codes, nvrtc, options.compile_cache(), options.nvrtc_threads);
    for (size_t k = 0; k < cubins.size(); ++k) {
      for (auto& [index, build] : batch.finish(printed[k], std::move(cubins[k]))) built[index].emplace(std::move(build));
    }
    for (auto& [p, failure] : unprinted) {
      for (auto& [index, build] : batch.finish(p, std::move(failure))) built[index].emplace(std::move(build));
    }
    done = round_end;
  }
  std::vector<Expected<CudaBuild>> result;
  result.reserve(flats.size());
  for (auto& b : built) {
    DRAGON_CHECK(b.has_value(), "compile_cuda_batch: a function of the batch got no build");
    result.push_back(std::move(*b));
  }
  return result;
}

CudaProgramBatch::CudaProgramBatch(std::vector<ir::PrimFunc> flats, lower::Target target,
                                   const std::vector<Range>& ranges, bool share_kernels)
    : flats_(std::move(flats)),
      target_(std::move(target)),
      sources_(flats_.size()),
      batch_position_(flats_.size()),
      handed_out_(flats_.size(), false),
      share_kernels_(share_kernels) {
  size_t next = 0;
  for (const Range& r : ranges) {
    if (r.begin != next || r.end <= r.begin || r.end > flats_.size()) {
      throw InternalError(fmt::format("CudaProgramBatch: the range [{}, {}) does not follow [.., {}) within {} functions",
                                      r.begin, r.end, next, flats_.size()));
    }
    Program program;
    for (size_t i = r.begin; i < r.end; ++i) {
      program.members.push_back(i);
      if (r.end - r.begin > 1) batch_position_[i] = i - r.begin;
    }
    programs_.push_back(std::move(program));
    next = r.end;
  }
  if (next != flats_.size()) {
    throw InternalError(fmt::format("CudaProgramBatch: the ranges cover {} of {} functions", next, flats_.size()));
  }
}

const codegen::CudaSource& CudaProgramBatch::source(size_t i) {
  if (!sources_[i]) {
    sources_[i] = batch_position_[i] ? codegen::generate_cuda(batch_member(flats_[i], *batch_position_[i]), target_)
                                     : codegen::generate_cuda(flats_[i], target_);
  }
  return *sources_[i];
}

const std::string& CudaProgramBatch::code(size_t program) {
  DRAGON_CHECK(program < programs_.size(), "CudaProgramBatch: program {} of {}", program, programs_.size());
  if (programs_[program].code) return *programs_[program].code;
  std::vector<size_t> members = programs_[program].members;
  for (size_t i : members) (void)source(i);  // may throw: the program stays unprinted
  std::string code;
  if (members.size() > 1) {
    std::vector<size_t> apart;
    code = batch_program(sources_, members, apart, programs_[program].launch_names, share_kernels_);
    for (size_t i : apart) programs_.push_back(Program{{i}, std::nullopt, {}});  // moves programs_: index again
  } else {
    code = sources_[members.front()]->code;  // a member alone keeps the entry names it was printed with
  }
  // Every kernel a member launches is defined here, but those it launches under another
  // member's entry (a non-empty launch name).
  size_t launched = 0;
  for (size_t i : members) launched += sources_[i]->kernels.size();
  kernels_launched_ += launched;
  kernels_defined_ += launched;
  for (const auto& [member, entries] : programs_[program].launch_names) {
    kernels_defined_ -= static_cast<size_t>(std::count_if(entries.begin(), entries.end(),
                                                          [](const std::string& e) { return !e.empty(); }));
  }
  programs_[program].members = std::move(members);
  programs_[program].code = std::move(code);
  return *programs_[program].code;
}

std::vector<std::pair<size_t, Expected<CudaBuild>>> CudaProgramBatch::finish(size_t program, Expected<Cubin> cubin) {
  DRAGON_CHECK(program < programs_.size(), "CudaProgramBatch: program {} of {}", program, programs_.size());
  DRAGON_CHECK(programs_[program].code || !cubin, "CudaProgramBatch: program {} built before it was printed", program);
  const std::vector<size_t> members = programs_[program].members;
  std::vector<std::pair<size_t, Expected<CudaBuild>>> builds;
  // A failed program of several members (rejected by NVRTC, or not printed) says nothing
  // about which member broke it (and a log mixing them is hard to read), so each member is
  // compiled again alone, under the same entry names; its own result is what it gets.
  if (!cubin && members.size() > 1) {
    for (size_t i : members) programs_.push_back(Program{{i}, std::nullopt, {}});
    return builds;
  }
  for (size_t i : members) {
    DRAGON_CHECK(!handed_out_[i], "CudaProgramBatch: function {} was handed out twice", i);
    handed_out_[i] = true;
    if (!cubin) {
      builds.emplace_back(i, cubin.error());
    } else {
      // A kernel another member defined for both is launched under that member's entry.
      if (auto it = programs_[program].launch_names.find(i); it != programs_[program].launch_names.end()) {
        for (size_t k = 0; k < it->second.size(); ++k) {
          if (!it->second[k].empty()) sources_[i]->kernels[k].name = it->second[k];
        }
      }
      builds.emplace_back(i, CudaBuild{std::move(*sources_[i]), cubin.value()});
    }
    sources_[i].reset();
  }
  return builds;
}

}  // namespace dragon::runtime
