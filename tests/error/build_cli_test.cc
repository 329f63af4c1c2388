// `dragon build` and `dragon run --target`: generated source, compiled artifacts written
// to -o, and clear user errors for impossible combinations and a missing GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/runtime/nvrtc_compiler.h"

namespace dragon::testing {
namespace {

std::string read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

bool is_elf(const std::string& bytes) { return bytes.size() > 4 && bytes.compare(0, 4, "\x7f" "ELF") == 0; }

TEST(BuildCli, PrintsGeneratedCppForTheCpu) {
  CliResult r = run_dragon("build relu:shape=4x8 --target cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("extern \"C\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dragon_entry"), std::string::npos) << r.output;
}

TEST(BuildCli, PrintsGeneratedCudaForTheGpuAfterTheScript) {
  std::string script = write_temp_file("build_cli_relu.script",
                                       "gb relu\ngl b0 2\nfu l0 l1\nsp l2 None 128\nbind l3 bx\nbind l4 tx\n");
  CliResult r = run_dragon("build relu:shape=64x64 --script " + script + " --target cuda --emit source");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("__global__"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("blockIdx.x"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("threadIdx.x"), std::string::npos) << r.output;
}

TEST(BuildCli, WritesASharedObjectForTheCpu) {
  std::string path = ::testing::TempDir() + "build_cli_relu.so";
  CliResult r = run_dragon("build relu:shape=4x8 --target cpu --emit so -o " + path);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(is_elf(read_binary(path)));
}

TEST(BuildCli, WritesACubinWithoutAGpu) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "[SKIP] this build has no NVRTC (no CUDA toolkit)";
  std::string script = write_temp_file("build_cli_relu2.script",
                                       "gb relu\ngl b0 2\nfu l0 l1\nsp l2 None 128\nbind l3 bx\nbind l4 tx\n");
  std::string path = ::testing::TempDir() + "build_cli_relu.cubin";
  CliResult r = run_dragon("build relu:shape=64x64 --script " + script + " --target cuda --emit cubin -o " + path);
  ASSERT_EQ(r.status, 0) << r.output;
  std::string cubin = read_binary(path);
  EXPECT_TRUE(is_elf(cubin));
  EXPECT_NE(cubin.find("relu"), std::string::npos);  // the kernel's symbol
}

TEST(BuildCli, ImpossibleCombinationsAreUserErrors) {
  CliResult cubin_cpu = run_dragon("build relu:shape=4x8 --target cpu --emit cubin -o /dev/null");
  EXPECT_EQ(cubin_cpu.status, 1);
  EXPECT_NE(cubin_cpu.output.find("--emit cubin needs --target cuda"), std::string::npos) << cubin_cpu.output;
  CliResult so_cuda = run_dragon("build relu:shape=4x8 --target cuda --emit so -o /dev/null");
  EXPECT_EQ(so_cuda.status, 1);
  EXPECT_NE(so_cuda.output.find("--emit so needs --target cpu"), std::string::npos) << so_cuda.output;
  EXPECT_EQ(run_dragon("build relu:shape=4x8").status, 1);                  // no --target
  EXPECT_EQ(run_dragon("build relu:shape=4x8 --target tpu").status, 1);     // unknown target
  EXPECT_EQ(run_dragon("build relu:shape=4x8 --target cpu --emit ptx").status, 1);
  // An unscheduled function has loops no thread runs: the GPU cannot take it.
  CliResult unbound = run_dragon("build relu:shape=4x8 --target cuda");
  EXPECT_EQ(unbound.status, 1) << unbound.output;
  EXPECT_NE(unbound.output.find("error:"), std::string::npos) << unbound.output;
}

TEST(RunCli, TargetsInterpCpuAndCuda) {
  CliResult interp = run_dragon("run relu:shape=4x8 --target interp");
  EXPECT_EQ(interp.status, 0) << interp.output;
  CliResult cpu = run_dragon("run relu:shape=4x8 --target cpu");
  EXPECT_EQ(cpu.status, 0) << cpu.output;
  EXPECT_NE(cpu.output.find("outputs match the interpreter"), std::string::npos) << cpu.output;
  if (runtime::cuda_device_available()) return;  // tests/gpu runs the CUDA path
  CliResult cuda = run_dragon("run relu:shape=4x8 --target cuda");
  EXPECT_EQ(cuda.status, 1) << cuda.output;
  EXPECT_NE(cuda.output.find("--target cuda needs a CUDA device"), std::string::npos) << cuda.output;
}

TEST(BenchCli, ListsASuiteOneProblemALine) {
  CliResult kb = run_dragon("bench kernelbench-l1 --list");
  ASSERT_EQ(kb.status, 0) << kb.output;
  EXPECT_EQ(std::count(kb.output.begin(), kb.output.end(), '\n'), 100);
  EXPECT_EQ(kb.output.rfind("1\t1_Square_matrix_multiplication_\t4096x4096\tmatmul:m=4096,n=4096,k=4096\n", 0), 0u)
      << kb.output.substr(0, 200);
  CliResult some = run_dragon("bench dlrm --list --problems R1,R12");
  ASSERT_EQ(some.status, 0) << some.output;
  EXPECT_EQ(std::count(some.output.begin(), some.output.end(), '\n'), 2);
  EXPECT_EQ(some.output.rfind("R1\t", 0), 0u);
}

TEST(BenchCli, BadSuitesAndSelectionsAreUserErrors) {
  CliResult unknown = run_dragon("bench kernelbench --list");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.output.find("unknown suite 'kernelbench'"), std::string::npos) << unknown.output;
  CliResult bad = run_dragon("bench dlrm --list --problems R99");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("'R99' names no problem"), std::string::npos) << bad.output;
  CliResult run = run_dragon("bench dlrm");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("only with --list"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace dragon::testing
