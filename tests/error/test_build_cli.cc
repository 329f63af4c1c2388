// `dragon build` and `dragon run --target`: generated source, compiled artifacts written
// to -o, and clear user errors for impossible combinations and a missing GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
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
  // 4096 elements in blocks of 128: the launch a profiler or `dragon verify` needs.
  EXPECT_NE(r.output.find("relu_kernel0: --grid 32,1,1 --block 128,1,1 --shared 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("arguments: X f32[4096]; relu f32[4096]"), std::string::npos) << r.output;
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
}

TEST(BuildCli, NestsLeftUnboundGetTheDefaultGpuSchedule) {
  // An unscheduled function has loops no thread runs: the untuned default schedule
  // (search/default_schedule.h) binds them before lowering, so it builds.
  CliResult unbound = run_dragon("build relu:shape=4x8 --target cuda");
  EXPECT_EQ(unbound.status, 0) << unbound.output;
  EXPECT_NE(unbound.output.find("__global__"), std::string::npos) << unbound.output;
  EXPECT_NE(unbound.output.find("threadIdx.x"), std::string::npos) << unbound.output;
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
  // The last column names the baselines; eager is known only where the plugin loads.
  const std::string first = kb.output.substr(0, kb.output.find('\n') + 1);
  EXPECT_EQ(first.rfind("1\t1_Square_matrix_multiplication_\t4096x4096\tmatmul:m=4096,n=4096,k=4096\teager", 0), 0u)
      << first;
  EXPECT_NE(first.find(", cuBLAS\n"), std::string::npos) << first;
  EXPECT_NE(kb.output.find("\t50_conv_standard_2D__square_input__square_kernel\t"), std::string::npos);
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
  CliResult no_out = run_dragon("bench dlrm");
  EXPECT_EQ(no_out.status, 1);
  EXPECT_NE(no_out.output.find("give --out FILE.json"), std::string::npos) << no_out.output;
  CliResult nothing = run_dragon("bench");
  EXPECT_EQ(nothing.status, 1);
  EXPECT_NE(nothing.output.find("name a suite"), std::string::npos) << nothing.output;
  CliResult no_trials = run_dragon("bench dlrm --out /tmp/dragon_cli_bench.json --db /tmp/dragon_cli_bench.db --max-trials 0");
  EXPECT_EQ(no_trials.status, 1);
  EXPECT_NE(no_trials.output.find("--max-trials 0: give a number of scripts, at least 1"), std::string::npos)
      << no_trials.output;
  CliResult no_db = run_dragon("bench dlrm --out /tmp/dragon_cli_bench.json --max-trials 200");
  EXPECT_EQ(no_db.status, 1);
  EXPECT_NE(no_db.output.find("--max-trials needs --db"), std::string::npos) << no_db.output;
}

TEST(BenchCli, RunsPeaksAndAuditsNeedAGpuAndSaySo) {
  if (runtime::cuda_device_available()) GTEST_SKIP() << "[SKIP] a GPU is present; tests/gpu runs these";
  for (const std::string& command : {std::string("bench dlrm --out /tmp/dragon_cli_bench.json"), std::string("peaks"),
                                     std::string("audit dlrm")}) {
    CliResult r = run_dragon(command);
    EXPECT_EQ(r.status, 1) << command << ": " << r.output;
    EXPECT_NE(r.output.find("GPU"), std::string::npos) << command << ": " << r.output;
  }
}

// A report is rendered from a results file anywhere: what happens to results the GPU
// machine sends back.
TEST(BenchCli, RendersAReportFromAResultsFileWithoutAGpu) {
  std::string results = ::testing::TempDir() + "dragon_cli_results.json";
  std::string report = ::testing::TempDir() + "dragon_cli_report.html";
  {
    std::ofstream out(results);
    out << R"({"suite": "dlrm", "device": "NVIDIA H200", "problems": [
      {"id": "R11", "name": "kjt_lengths_to_offsets", "status": "ok",
       "ours": {"name": "ours", "status": "ok", "checks": [], "time": {"median_ms": 0.02, "min_ms": 0.019,
                "max_ms": 0.03, "ci95_ms": 0.001, "calls": 50, "converged": true}},
       "baselines": [{"name": "torch eager: at::cumsum", "status": "ok", "checks": [],
                      "time": {"median_ms": 0.04, "min_ms": 0.039, "max_ms": 0.05, "ci95_ms": 0.001, "calls": 50}}]}]})";
  }
  CliResult r = run_dragon("bench --from " + results + " --report " + report);
  ASSERT_EQ(r.status, 0) << r.output;
  std::ifstream in(report);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("kjt_lengths_to_offsets"), std::string::npos);
  EXPECT_NE(html.find(">2x<"), std::string::npos) << "0.04 / 0.02";
  // Chunks of one suite make one report; chunks of two suites are refused.
  std::string other = ::testing::TempDir() + "dragon_cli_results_other.json";
  {
    std::ofstream out(other);
    out << R"({"suite": "dlrm", "device": "NVIDIA H200", "problems": [
      {"id": "R1", "name": "embedding_bag_sum_fixed_l", "status": "incorrect", "ours": {"name": "ours",
       "status": "incorrect", "checks": []}, "baselines": []}]})";
  }
  CliResult merged = run_dragon("bench --from " + results + " --from " + other + " --report " + report);
  ASSERT_EQ(merged.status, 0) << merged.output;
  EXPECT_NE(merged.output.find("(2 problems)"), std::string::npos) << merged.output;
  {
    std::ofstream out(other);
    out << R"({"suite": "kernelbench-l1", "device": "NVIDIA H200", "problems": []})";
  }
  CliResult mixed = run_dragon("bench --from " + results + " --from " + other + " --report " + report);
  EXPECT_EQ(mixed.status, 1);
  EXPECT_NE(mixed.output.find("is a run of kernelbench-l1"), std::string::npos) << mixed.output;
  CliResult no_report = run_dragon("bench --from " + results);
  EXPECT_EQ(no_report.status, 1);
  EXPECT_NE(no_report.output.find("--report"), std::string::npos) << no_report.output;
  CliResult broken = run_dragon("bench --from /nonexistent/results.json --report " + report);
  EXPECT_EQ(broken.status, 1);
  EXPECT_NE(broken.output.find("cannot read"), std::string::npos) << broken.output;
}

}  // namespace
}  // namespace dragon::testing
