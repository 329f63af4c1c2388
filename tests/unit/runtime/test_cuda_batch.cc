// compile_cuda_batch (compile.h): several GEMM variants in one NVRTC program give one CUBIN
// defining every member's kernels under unique entry names, each member keeps the kernels
// and launch configuration a compile of its own gives, and a member NVRTC rejects fails
// alone while the others of its batch still build; the batch's prelude is the union of
// its members' prelude parts, so f32-only members (no fp16 headers), f16 ones and members
// with different wgmma helpers (another N) share one program. NVRTC needs no GPU.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "dragon/lower/lower.h"
#include "dragon/lower/target.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/search/auto_bind.h"
#include "dragon/search/rewrite_cooperative_fetch.h"
#include "dragon/support/error.h"
#include "unit/runtime/unbuildable_functions.h"
#include "unit/schedule/gemm_sketch.h"
#include "unit/schedule/tensorcore_gemm_sketch.h"
#include "unit/schedule/wgmma_gemm_sketch.h"

namespace dragon::runtime {
namespace {

// A cache of this program's own under the build directory: repeated runs reuse what
// compiled, and nothing reads or fills ~/.cache. Failed compiles are never cached, so the
// fallback of a rejected batch runs every time.
CompileCache& batch_test_cache() {
  static CompileCache cache(std::string(DRAGON_BINARY_DIR) + "/runtime-batch-test-cache");
  return cache;
}

BuildOptions test_options() {
  BuildOptions options;
  options.cache = &batch_test_cache();
  return options;
}

ir::PrimFunc lowered(schedule::Schedule& sch) {
  search::auto_bind(sch);  // whatever the schedule left unbound (the sketch's output cast)
  return lower::lower(sch.func(), lower::Target::cuda_h200()).func;
}

ir::PrimFunc matmul(const std::string& spec) { return ops::OpRegistry::global().make_workload(spec).func; }

// Three GEMM variants with different kernels: fp32 with AutoBind only; fp32 through the
// MetaSchedule sketch (shared tiles, cooperative fetch, virtual threads); f16 on tensor
// cores (its prelude also holds the mma helpers, so the batch's prelude is the longest).
std::vector<ir::PrimFunc> gemm_variants() {
  schedule::Schedule plain(matmul("matmul:m=64,n=64,k=64"));
  schedule::Schedule tiled(matmul("matmul:m=64,n=64,k=64"));
  schedule::testing::apply_gemm_sketch(tiled);
  if (search::rewrite_cooperative_fetch(tiled) != 2) throw InternalError("the GEMM sketch has two shared copies");
  schedule::Schedule tensor_core = schedule::testing::tensorcore_gemm_sketch("matmul:m=128,n=128,k=128,dtype=f16");
  return {lowered(plain), lowered(tiled), lowered(tensor_core)};
}

// A flat function NVRTC rejects though the emitter prints it: its kernel stores into an
// input, which the emitter declares `const`.
template <typename T>
T read(const std::string& bytes, size_t offset) {
  if (offset + sizeof(T) > bytes.size()) throw std::out_of_range("ELF read past the end of the CUBIN");
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// The functions a CUBIN (a 64-bit ELF) defines: the STT_FUNC symbols of its symbol table.
std::set<std::string> cubin_functions(const std::string& cubin) {
  auto header = read<Elf64_Ehdr>(cubin, 0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) {
    throw std::invalid_argument("not a 64-bit ELF");
  }
  auto section = [&](size_t i) { return read<Elf64_Shdr>(cubin, header.e_shoff + i * header.e_shentsize); };
  std::set<std::string> functions;
  for (size_t s = 0; s < header.e_shnum; ++s) {
    Elf64_Shdr symtab = section(s);
    if (symtab.sh_type != SHT_SYMTAB) continue;
    Elf64_Shdr strtab = section(symtab.sh_link);
    for (size_t offset = 0; offset + sizeof(Elf64_Sym) <= symtab.sh_size; offset += sizeof(Elf64_Sym)) {
      auto symbol = read<Elf64_Sym>(cubin, symtab.sh_offset + offset);
      if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_shndx == SHN_UNDEF) continue;
      size_t name = strtab.sh_offset + symbol.st_name;
      if (name >= cubin.size()) throw std::out_of_range("ELF symbol name past the end of the CUBIN");
      functions.insert(std::string(cubin.c_str() + name));
    }
  }
  return functions;
}

std::vector<std::string> entry_names(const CudaBuild& build) {
  std::vector<std::string> names;
  for (const codegen::KernelLaunch& k : build.source.kernels) names.push_back(k.name);
  return names;
}

// `text` with every occurrence of `from` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

#define SKIP_WITHOUT_NVRTC() \
  if (!nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (CUDA toolkit not found)"

TEST(CudaBatch, ThreeGemmVariantsShareOneCubinAndMatchTheirOwnCompiles) {
  SKIP_WITHOUT_NVRTC();
  std::vector<ir::PrimFunc> flats = gemm_variants();
  std::vector<Expected<CudaBuild>> batch = compile_cuda_batch(flats, lower::Target::cuda_h200(), test_options(), 3);
  std::vector<Expected<CudaBuild>> alone = compile_cuda_all(flats, lower::Target::cuda_h200(), test_options());
  ASSERT_EQ(batch.size(), 3u);
  ASSERT_EQ(alone.size(), 3u);
  std::set<std::string> batch_entries;
  size_t batch_kernels = 0;
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(batch[i].ok()) << batch[i].error().describe();
    ASSERT_TRUE(alone[i].ok()) << alone[i].error().describe();
    const CudaBuild& member = batch[i].value();
    const CudaBuild& single = alone[i].value();
    // One module for the whole batch.
    EXPECT_EQ(member.cubin.bytes, batch[0].value().cubin.bytes);
    // The same kernels, launched the same way, under names prefixed with the position...
    ASSERT_EQ(member.source.kernels.size(), single.source.kernels.size());
    for (size_t k = 0; k < single.source.kernels.size(); ++k) {
      const codegen::KernelLaunch& a = member.source.kernels[k];
      const codegen::KernelLaunch& b = single.source.kernels[k];
      EXPECT_EQ(a.name, "b" + std::to_string(i) + "_" + b.name);
      EXPECT_EQ(a.grid, b.grid);
      EXPECT_EQ(a.block, b.block);
      EXPECT_EQ(a.dynamic_shared_bytes, b.dynamic_shared_bytes);
      EXPECT_EQ(a.args, b.args);
    }
    // ...and the member's code is its own compile's code but for the names.
    EXPECT_EQ(replace_all(member.source.code, "b" + std::to_string(i) + "_" + flats[i]->name, flats[i]->name),
              single.source.code);
    // Its own compile defines exactly its kernels.
    std::vector<std::string> single_names = entry_names(single);
    EXPECT_EQ(cubin_functions(single.cubin.bytes), std::set<std::string>(single_names.begin(), single_names.end()));
    for (const std::string& name : entry_names(member)) batch_entries.insert(name);
    batch_kernels += member.source.kernels.size();
  }
  EXPECT_EQ(batch_entries.size(), batch_kernels) << "entry names clash across the batch";
  EXPECT_GE(batch_kernels, 3u);
  // The batch's CUBIN defines every member's kernels and nothing else.
  EXPECT_EQ(cubin_functions(batch[0].value().cubin.bytes), batch_entries);
  // The tensor-core member's mma helpers made it into the shared prelude.
  EXPECT_NE(batch[2].value().source.code.find("mma.sync.aligned.m16n8k16"), std::string::npos);
}

TEST(CudaBatch, ABrokenMemberFailsAloneAndTheOthersStillBuild) {
  SKIP_WITHOUT_NVRTC();
  std::vector<ir::PrimFunc> variants = gemm_variants();
  std::vector<ir::PrimFunc> flats = {variants[0], testing::writes_its_input(), variants[1]};
  std::vector<Expected<CudaBuild>> batch = compile_cuda_batch(flats, lower::Target::cuda_h200(), test_options(), 3);
  ASSERT_EQ(batch.size(), 3u);
  ASSERT_FALSE(batch[1].ok());
  // The failure is NVRTC's, and its log shows the broken member's store into the input.
  EXPECT_EQ(batch[1].error().api, "nvrtcCompileProgram");
  EXPECT_NE(batch[1].error().log.find("in[tx] = out[tx];"), std::string::npos) << batch[1].error().log;
  for (size_t i : {size_t{0}, size_t{2}}) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(batch[i].ok()) << batch[i].error().describe();
    // Compiled again alone under the batch's entry names: a module of its own kernels.
    std::vector<std::string> names = entry_names(batch[i].value());
    EXPECT_EQ(names[0].rfind("b" + std::to_string(i) + "_", 0), 0u) << names[0];
    EXPECT_EQ(cubin_functions(batch[i].value().cubin.bytes), std::set<std::string>(names.begin(), names.end()));
  }
}

// A function code generation refuses fails alone, saying why, and its program's other
// members still build (each alone, as after an NVRTC rejection).
TEST(CudaBatch, AFunctionCodegenRefusesFailsAloneAndTheOthersStillBuild) {
  SKIP_WITHOUT_NVRTC();
  std::vector<ir::PrimFunc> variants = gemm_variants();
  std::vector<ir::PrimFunc> flats = {variants[0], testing::outside_any_kernel(), variants[1]};
  std::vector<Expected<CudaBuild>> batch = compile_cuda_batch(flats, lower::Target::cuda_h200(), test_options(), 3);
  ASSERT_EQ(batch.size(), 3u);
  ASSERT_FALSE(batch[1].ok());
  EXPECT_EQ(batch[1].error().api, "generate_cuda");
  EXPECT_NE(batch[1].error().message.find("outside any kernel"), std::string::npos) << batch[1].error().message;
  for (size_t i : {size_t{0}, size_t{2}}) {
    ASSERT_TRUE(batch[i].ok()) << i << ": " << batch[i].error().describe();
    EXPECT_EQ(entry_names(batch[i].value())[0].rfind("b" + std::to_string(i) + "_", 0), 0u) << "its batch name kept";
  }
}

TEST(CudaBatch, ProgramsHoldAtMostTheGivenNumberAndABatchOfOneKeepsItsNames) {
  SKIP_WITHOUT_NVRTC();
  std::vector<ir::PrimFunc> flats = gemm_variants();
  // Two per program: {0, 1} share a module; 2 is alone, compiled as compile_cuda_all does.
  std::vector<Expected<CudaBuild>> batch = compile_cuda_batch(flats, lower::Target::cuda_h200(), test_options(), 2);
  std::vector<Expected<CudaBuild>> single = compile_cuda_all({flats[2]}, lower::Target::cuda_h200(), test_options());
  ASSERT_EQ(batch.size(), 3u);
  for (const auto& b : batch) ASSERT_TRUE(b.ok()) << b.error().describe();
  ASSERT_TRUE(single[0].ok()) << single[0].error().describe();
  EXPECT_EQ(batch[0].value().cubin.bytes, batch[1].value().cubin.bytes);
  EXPECT_NE(batch[1].value().cubin.bytes, batch[2].value().cubin.bytes);
  EXPECT_EQ(batch[2].value().source.code, single[0].value().source.code);
  EXPECT_EQ(batch[2].value().cubin.bytes, single[0].value().cubin.bytes);
  std::vector<std::string> pair_names = entry_names(batch[0].value());
  for (const std::string& name : entry_names(batch[1].value())) pair_names.push_back(name);
  EXPECT_EQ(cubin_functions(batch[0].value().cubin.bytes), std::set<std::string>(pair_names.begin(), pair_names.end()));
}

TEST(CudaBatch, RefusesProgramsOfNoFunctions) {
  EXPECT_THROW(compile_cuda_batch({}, lower::Target::cuda_h200(), test_options(), 0), UserError);
}

TEST(CudaBatch, MembersWithOtherWgmmaHelpersShareOneProgram) {
  SKIP_WITHOUT_NVRTC();
  // Search batches candidates of one GEMM whose wgmma N differs: each prelude holds its
  // own wgmma helper, the batch's prelude both, and every member builds in one module.
  schedule::Schedule plain(matmul("matmul:m=64,n=64,k=64"));
  schedule::Schedule n128 =
      schedule::testing::wgmma_gemm_sketch("matmul:m=128,n=256,k=128,trans_b=true,dtype=f16", {2, 128, 0}, true);
  schedule::Schedule n256 =
      schedule::testing::wgmma_gemm_sketch("matmul:m=128,n=256,k=128,trans_b=true,dtype=f16", {2, 256, 0}, true);
  std::vector<ir::PrimFunc> flats = {lowered(plain), lowered(n128), lowered(n256)};
  std::vector<Expected<CudaBuild>> batch = compile_cuda_batch(flats, lower::Target::cuda_h200(), test_options(), 3);
  ASSERT_EQ(batch.size(), 3u);
  std::set<std::string> modules, entries;
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(batch[i].ok()) << batch[i].error().describe();
    modules.insert(batch[i].value().cubin.bytes);
    for (const std::string& name : entry_names(batch[i].value())) entries.insert(name);
  }
  EXPECT_EQ(modules.size(), 1u) << "every member in the batch's one module";
  EXPECT_EQ(cubin_functions(batch[0].value().cubin.bytes), entries);
  EXPECT_NE(batch[1].value().source.code.find("wgmma.mma_async.sync.aligned.m64n128k16"), std::string::npos);
  EXPECT_EQ(batch[1].value().source.code.find("wgmma.mma_async.sync.aligned.m64n256k16"), std::string::npos);
  EXPECT_NE(batch[2].value().source.code.find("wgmma.mma_async.sync.aligned.m64n256k16"), std::string::npos);
}

// A batch mixing f32-only functions, whose preludes lack cuda_fp16.h and cuda_bf16.h, with
// f16 ones that need them (an elementwise op converting through __half, a tensor-core
// GEMM with the mma helpers): one program, one module, every member's kernels in it; the
// f32 member first, so its prelude is no prefix of the others' (the order that broke a
// merge by longest prelude).
TEST(CudaBatch, F32OnlyAndF16MembersShareOneProgram) {
  SKIP_WITHOUT_NVRTC();
  const std::string kHeaders = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";
  std::vector<ir::PrimFunc> variants = gemm_variants();  // f32 plain, f32 tiled, f16 tensor cores
  schedule::Schedule relu16(ops::OpRegistry::global().make_workload("relu:shape=16x64,dtype=f16").func);
  std::vector<ir::PrimFunc> flats = {variants[0], lowered(relu16), variants[1], variants[2]};
  std::vector<Expected<CudaBuild>> batch = compile_cuda_batch(flats, lower::Target::cuda_h200(), test_options(), 4);
  ASSERT_EQ(batch.size(), 4u);
  std::set<std::string> modules, entries;
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(batch[i].ok()) << batch[i].error().describe();
    modules.insert(batch[i].value().cubin.bytes);
    for (const std::string& name : entry_names(batch[i].value())) entries.insert(name);
    // Each member's own source: the headers exactly where it uses half types.
    const std::string& code = batch[i].value().source.code;
    EXPECT_EQ(code.rfind(kHeaders, 0) == 0, i == 1 || i == 3) << code.substr(0, 200);
  }
  EXPECT_EQ(modules.size(), 1u) << "every member in the batch's one module";
  EXPECT_EQ(cubin_functions(batch[0].value().cubin.bytes), entries);
  // Each f32 member compiles alone without the headers too.
  std::vector<Expected<CudaBuild>> alone = compile_cuda_all({variants[0], variants[1]}, lower::Target::cuda_h200(),
                                                             test_options());
  for (auto& a : alone) {
    ASSERT_TRUE(a.ok()) << a.error().describe();
    EXPECT_EQ(a.value().source.code.find("cuda_fp16.h"), std::string::npos);
  }
}

// Search's candidates of one workload often differ in one kernel: two softmax schedules
// whose last block runs 64 or 128 threads a block print their first three kernels alike.
// The batch defines those once; the second member launches the first's entries for them,
// and its own for the kernel that differs. NVRTC compiles 5 kernels, not 8.
TEST(CudaBatch, AKernelTwoMembersShareIsDefinedOnceAndLaunchedByBoth) {
  SKIP_WITHOUT_NVRTC();
  auto softmax = [](int64_t last_block_threads) {
    schedule::Schedule sch(ops::OpRegistry::global().make_workload("softmax:shape=64x256").func);
    search::AutoBindOptions options;
    options.max_threads_per_block = last_block_threads;
    search::auto_bind_block(sch, sch.get_block("softmax"), options);
    return lowered(sch);
  };
  std::vector<ir::PrimFunc> flats = {softmax(64), softmax(128)};
  std::vector<Expected<CudaBuild>> batch = compile_cuda_batch(flats, lower::Target::cuda_h200(), test_options(), 2);
  std::vector<Expected<CudaBuild>> alone = compile_cuda_all(flats, lower::Target::cuda_h200(), test_options());
  ASSERT_EQ(batch.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(batch[i].ok()) << batch[i].error().describe();
    ASSERT_TRUE(alone[i].ok()) << alone[i].error().describe();
    // Every span printed is its kernel's definition.
    const codegen::CudaSource& source = alone[i].value().source;
    ASSERT_EQ(source.kernel_spans.size(), source.kernels.size());
    for (size_t k = 0; k < source.kernels.size(); ++k) {
      const auto [begin, end] = source.kernel_spans[k];
      EXPECT_EQ(source.code.substr(begin, 11), "extern \"C\" ");
      EXPECT_NE(source.code.substr(begin, end - begin).find(" " + source.kernels[k].name + "("), std::string::npos);
      EXPECT_EQ(source.code.substr(end - 2, 2), "}\n");
    }
  }
  const std::vector<std::string> first = entry_names(batch[0].value()), second = entry_names(batch[1].value());
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(second.size(), 4u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(second[k], first[k]) << "kernel " << k << " is the first member's";
  EXPECT_EQ(second[3], "b1_softmax_kernel3");
  // The module defines each distinct kernel once, every entry either member launches.
  std::set<std::string> launched(first.begin(), first.end());
  launched.insert(second.begin(), second.end());
  EXPECT_EQ(launched.size(), 5u);
  std::set<std::string> defined = cubin_functions(batch[0].value().cubin.bytes);
  std::erase_if(defined, [](const std::string& f) { return f.starts_with("$__internal"); });  // ptxas's division helpers
  EXPECT_EQ(defined, launched);
  // The launches are the members' own: grid, block and arguments as compiled alone.
  for (size_t i = 0; i < 2; ++i) {
    for (size_t k = 0; k < 4; ++k) {
      const codegen::KernelLaunch& a = batch[i].value().source.kernels[k];
      const codegen::KernelLaunch& b = alone[i].value().source.kernels[k];
      EXPECT_EQ(a.grid, b.grid);
      EXPECT_EQ(a.block, b.block);
      EXPECT_EQ(a.args, b.args);
    }
  }
  EXPECT_NE(batch[0].value().source.kernels[3].block, batch[1].value().source.kernels[3].block);
  // What the tuner reports: the definitions a program's code holds against the kernels
  // its members launch; without sharing, one each.
  for (bool share : {true, false}) {
    CudaProgramBatch programs(flats, lower::Target::cuda_h200(), {{0, 2}}, share);
    (void)programs.code(0);
    EXPECT_EQ(programs.kernels_launched(), 8u);
    EXPECT_EQ(programs.kernels_defined(), share ? 5u : 8u);
  }
}

}  // namespace
}  // namespace dragon::runtime
