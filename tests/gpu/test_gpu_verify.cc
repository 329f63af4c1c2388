// Every CUDA kernel of tests/harness_exploits/cuda through `dragon verify --json` on the
// GPU: honest kernels pass, each exploit is rejected with the failure kind that names it,
// or by `--time` where only the timed rotation can see it (the CUDA half of the exploit
// suite; the CPU half runs in CI). Red zones alternate guards and page ends from run to
// run, so the page ends' device virtual memory is exercised here. [SKIP] without a device.
#include <gtest/gtest.h>

#include "dragon/runtime/cuda_driver.h"
#include "harness_exploits/exploit_catalog.h"
#include "harness_exploits/verify_cli.h"

namespace dragon::testing {
namespace {

class ExploitCudaRun : public ::testing::TestWithParam<ExploitCase> {};

TEST_P(ExploitCudaRun, VerdictNamesTheExploit) {
  if (!runtime::cuda_device_available()) {
    GTEST_SKIP() << "no CUDA device: the CUDA exploit kernels run on the GPU machine (scripts/device-test.sh)";
  }
  expect_verdict(GetParam(), run_verify(GetParam()));
}

std::string case_name(const ::testing::TestParamInfo<ExploitCase>& info) { return info.param.name(); }

INSTANTIATE_TEST_SUITE_P(Catalog, ExploitCudaRun, ::testing::ValuesIn(cuda_exploit_cases()), case_name);

}  // namespace
}  // namespace dragon::testing
