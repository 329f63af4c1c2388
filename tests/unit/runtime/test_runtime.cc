// The runtime's boundaries: the compile cache (keys, hits and misses, atomic entries), the
// CPU compiler and NVRTC (results cached, errors returned with the compiler's log), the
// CUDA driver failing cleanly without a GPU, and the build driver's argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "dragon/ir/op.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/compile_cache.h"
#include "dragon/runtime/cpu_module.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/runtime/nvrtc_compiler.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::runtime {
namespace {

// An empty cache directory of its own for each test.
std::string fresh_cache_dir(const std::string& name) {
  std::string dir = std::string(DRAGON_BINARY_DIR) + "/runtime-test-cache/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(CompileCache, KeysDependOnEveryPartAndItsBoundaries) {
  std::string k = CompileCache::key({"source", "-O2", "g++ 13"});
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, CompileCache::key({"source", "-O2", "g++ 13"}));
  EXPECT_NE(k, CompileCache::key({"source", "-O3", "g++ 13"}));
  EXPECT_NE(k, CompileCache::key({"source", "-O2", "g++ 14"}));
  EXPECT_NE(CompileCache::key({"ab", "c"}), CompileCache::key({"a", "bc"}));
}

TEST(CompileCache, StoresAtomicallyAndCountsHitsAndMisses) {
  CompileCache cache(fresh_cache_dir("store"));
  EXPECT_FALSE(cache.load("0123", ".bin").has_value());
  EXPECT_EQ(cache.misses(), 1);
  ASSERT_TRUE(cache.store("0123", ".bin", "bytes").ok());
  EXPECT_EQ(cache.load("0123", ".bin").value_or(""), "bytes");
  EXPECT_EQ(cache.hits(), 1);
  // No scratch files are left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache.directory())) {
    EXPECT_EQ(entry.path().filename().string().rfind("tmp-", 0), std::string::npos) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 1);
}

constexpr const char* kCpuSource = R"(
extern "C" void twice(void* const* args) {
  float* x = (float*)args[0];
  for (int i = 0; i < 4; ++i) x[i] *= 2;
}
)";

TEST(CpuModule, CompilesOnceThenLoadsFromTheCache) {
  CompileCache cache(fresh_cache_dir("cpu"));
  auto first = CpuModule::compile(kCpuSource, {}, cache);
  ASSERT_TRUE(first.ok()) << first.error().describe();
  EXPECT_FALSE(first.value()->from_cache());
  EXPECT_EQ(cache.misses(), 1);
  auto second = CpuModule::compile(kCpuSource, {}, cache);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second.value()->from_cache());
  EXPECT_EQ(cache.hits(), 1);
  // Other flags, another entry.
  CpuCompileOptions o1;
  o1.optimization = "-O1";
  auto third = CpuModule::compile(kCpuSource, o1, cache);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third.value()->from_cache());

  auto entry = second.value()->entry("twice");
  ASSERT_TRUE(entry.ok());
  float x[4] = {1, 2, 3, 4};
  void* args[] = {x};
  entry.value()(args);
  EXPECT_EQ(x[3], 8.0f);
  auto missing = second.value()->entry("thrice");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().api, "dlsym");
}

TEST(CpuModule, CompilerErrorsReturnTheCompilersLog) {
  CompileCache cache(fresh_cache_dir("cpu-error"));
  auto result = CpuModule::compile("extern \"C\" void f() { undeclared_name = 1; }\n", {}, cache);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().api, "g++");
  EXPECT_NE(result.error().log.find("undeclared_name"), std::string::npos) << result.error().log;
  EXPECT_NE(result.error().describe().find("g++ failed"), std::string::npos);
  EXPECT_THROW((void)CpuModule::compile("syntax error here", {}, cache).value(), RuntimeError);
  CpuCompileOptions missing_compiler;
  missing_compiler.compiler = "no-such-compiler-dragon";
  auto absent = CpuModule::compile(kCpuSource, missing_compiler, cache);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().api, "posix_spawnp");
}

constexpr const char* kCudaSource = R"(
extern "C" __global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }
)";

TEST(Nvrtc, CompilesToACubinOnceThenLoadsFromTheCache) {
  if (!nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC";
  CompileCache cache(fresh_cache_dir("nvrtc"));
  auto first = nvrtc_compile(kCudaSource, "scale.cu", {}, cache);
  ASSERT_TRUE(first.ok()) << first.error().describe();
  EXPECT_FALSE(first.value().from_cache);
  EXPECT_EQ(first.value().bytes.substr(0, 4), std::string("\x7f" "ELF", 4));
  auto second = nvrtc_compile(kCudaSource, "scale.cu", {}, cache);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second.value().from_cache);
  EXPECT_EQ(second.value().bytes, first.value().bytes);
  // The key holds the architecture.
  NvrtcOptions sm80;
  sm80.arch = "sm_80";
  auto third = nvrtc_compile(kCudaSource, "scale.cu", sm80, cache);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third.value().from_cache);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 2);
}

// -minimal cuts NVRTC's time per program (bench/results/2026-12-05-nvrtc-prelude.md, where
// bench_nvrtc_prelude also checks that CUBINs stay byte-identical): every NVRTC that has it
// (12.4 on) gets it, and a source using the fp16 header still compiles under it.
TEST(Nvrtc, MinimalWhereNvrtcHasIt) {
  if (!nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC";
  Expected<std::string> version = nvrtc_version();
  ASSERT_TRUE(version.ok());
  int major = std::stoi(version.value());
  int minor = std::stoi(version.value().substr(version.value().find('.') + 1));
  std::vector<std::string> flags = nvrtc_flags({});
  bool has_minimal = std::find(flags.begin(), flags.end(), "-minimal") != flags.end();
  EXPECT_EQ(has_minimal, major > 12 || (major == 12 && minor >= 4)) << version.value();
  CompileCache cache(fresh_cache_dir("nvrtc-minimal"));
  auto half = nvrtc_compile("#include <cuda_fp16.h>\nextern \"C\" __global__ void h(__half* x) { x[0] = "
                            "__float2half_rn(__half2float(x[0]) * 2.0f); }\n",
                            "half.cu", {}, cache);
  ASSERT_TRUE(half.ok()) << half.error().describe();
}

TEST(Nvrtc, SyntaxErrorsReturnNvrtcsLog) {
  if (!nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC";
  CompileCache cache(fresh_cache_dir("nvrtc-error"));
  auto result = nvrtc_compile("extern \"C\" __global__ void k() { int x = ; }\n", "bad.cu", {}, cache);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().api, "nvrtcCompileProgram");
  EXPECT_NE(result.error().log.find("error"), std::string::npos) << result.error().log;
  EXPECT_NE(result.error().log.find("bad.cu"), std::string::npos) << result.error().log;
  EXPECT_FALSE(cache.contains(CompileCache::key({"x"}), ".cubin"));
}

TEST(Nvrtc, ManyProgramsOnThePoolKeepTheirOrder) {
  if (!nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC";
  CompileCache cache(fresh_cache_dir("nvrtc-pool"));
  std::vector<std::string> sources;
  for (int i = 0; i < 6; ++i) {
    sources.push_back("extern \"C\" __global__ void k" + std::to_string(i) + "(float* x) { x[0] = " +
                      std::to_string(i) + ".0f; }\n");
  }
  sources.push_back("this is not CUDA");
  auto results = nvrtc_compile_all(sources, {}, cache, 4);
  ASSERT_EQ(results.size(), sources.size());
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].error().describe();
    // Each CUBIN holds its own kernel's name.
    EXPECT_NE(results[i].value().bytes.find("k" + std::to_string(i)), std::string::npos);
  }
  EXPECT_FALSE(results[6].ok());
}

TEST(CudaDriver, ReportsItsStateWithoutCrashing) {
  Expected<CudaDriver*> driver = CudaDriver::get();
  if (driver.ok()) {
    EXPECT_GT(driver.value()->device_count(), 0);
    GTEST_SKIP() << "[SKIP] a GPU is present (" << driver.value()->device_name() << "); tests/gpu/ runs on it";
  }
  // No GPU here: a clean failure that names the API, every time it is asked.
  EXPECT_FALSE(driver.error().api.empty());
  EXPECT_FALSE(cuda_device_available());
  EXPECT_EQ(CudaDriver::get().error().api, driver.error().api);
}

TEST(BuildDriver, CudaExecutablesBuildWithoutAGpuAndFailCleanlyToRunWithoutOne) {
  if (!nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC";
  ir::Buffer out = ir::Buffer::make("out", ir::DataType::f32(), {32});
  ir::Var bx("bx"), tx("tx");
  ir::Stmt body = ir::ForNode::make(
      bx, 0, 1, ir::ForKind::kThreadBinding,
      ir::ForNode::make(tx, 0, 32, ir::ForKind::kThreadBinding,
                        ir::BufferStoreNode::make(out, ir::cast(ir::DataType::f32(), tx), {tx}), "threadIdx.x"),
      "blockIdx.x");
  ir::PrimFunc f = ir::PrimFunc::make("iota", {{out, ir::ParamRole::kOutput, {}}}, body);
  CompileCache cache(fresh_cache_dir("build"));
  BuildOptions options;
  options.cache = &cache;
  auto exe = build_lowered(f, lower::Target::cuda_h200(), options);
  ASSERT_TRUE(exe.ok()) << exe.error().describe();
  std::vector<tensor::HostTensor> wrong;
  Status bad = exe.value()->run(wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("takes 1 arguments"), std::string::npos);
  if (cuda_device_available()) GTEST_SKIP() << "[SKIP] a GPU is present; tests/gpu/ runs kernels";
  std::vector<tensor::HostTensor> args = {tensor::HostTensor::like(out)};
  Status status = exe.value()->run(args);
  ASSERT_FALSE(status.ok());
  EXPECT_FALSE(status.error().api.empty());
}

}  // namespace
}  // namespace dragon::runtime
