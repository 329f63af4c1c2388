// `dragon verify --time` as a user meets it without a GPU: a CPU kernel cannot be timed,
// which is said before anything runs (exit status 1, the reason on stderr). The GPU side
// of --time is in test_isolated_timing_gpu.cc.
#include <gtest/gtest.h>

#include "error/cli_runner.h"

namespace dragon::testing {
namespace {

std::string isolation_kernel(const std::string& file) {
  return std::string(DRAGON_SOURCE_DIR) + "/tests/unit/harness/isolation/kernels/" + file;
}

TEST(VerifyTimeCli, TimingACpuKernelIsAUserError) {
  CliResult r = run_dragon("verify relu:shape=4x256 --kernel " + isolation_kernel("relu.cc") + " --entry relu --time");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("error: --time times CUDA kernels (.cu)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CPU timing is not offered"), std::string::npos) << r.output;
  // Refused before verification: no verdict was printed.
  EXPECT_EQ(r.output.find("PASS"), std::string::npos) << r.output;
}

// The entry is looked up in the CUBIN's symbol table when the kernel compiles, so a wrong
// name fails here, without a GPU, instead of "compiles, but no device".
TEST(VerifyTimeCli, CudaEntryTheCubinLacksFailsWithoutAGpu) {
  CliResult r = run_dragon("verify relu:shape=4x256 --kernel " + isolation_kernel("relu.cu") +
                           " --entry nope --grid 4 --block 256");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("has no kernel named 'nope' (its kernels: relu)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("compiles, but"), std::string::npos) << r.output;
}

TEST(VerifyTimeCli, TimeIsListedInTheHelp) {
  CliResult r = run_dragon("verify --help");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("--time"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dragon::testing
