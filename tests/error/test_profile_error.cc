// dragon profile: missing commands, unknown programs, no GPU and bad flags are user
// errors; re-analysing a trace folder works anywhere.
#include <filesystem>
#include <string>

#include "cli_runner.h"
#include "dragon/profile/cuda_presence.h"

namespace dragon::testing {
namespace {

std::string make_trace_dir(const std::string& name) {
  std::string dir = ::testing::TempDir() + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_temp_file(name + "/trace-42.jsonl",
                  "{\"t\":\"process\",\"pid\":42,\"cmd\":\"python3\",\"start\":0}\n"
                  "{\"t\":\"kernel\",\"n\":\"ampere_sgemm_128x64_nn\",\"s\":100,\"e\":400,\"d\":0,\"st\":7}\n"
                  "{\"t\":\"kernel\",\"n\":\"_ZN2at6native29vectorized_layer_norm_kernelIffEEvv\",\"s\":500,\"e\":"
                  "700,\"d\":0,\"st\":7}\n"
                  "{\"t\":\"range\",\"n\":\"measure\",\"s\":50,\"e\":950}\n"
                  "{\"t\":\"end\",\"end\":1000,\"dropped\":0}\n");
  return dir;
}

TEST(ProfileCli, NoCommandIsAUserError) {
  CliResult r = run_dragon("profile");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("give the command to profile after --"), std::string::npos) << r.output;
}

TEST(ProfileCli, UnknownCommandIsAUserError) {
  CliResult r = run_dragon("profile --out " + ::testing::TempDir() + "p1 -- no-such-program-xyz --flag");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("command not found: no-such-program-xyz"), std::string::npos) << r.output;
}

TEST(ProfileCli, UnknownActivityIsAUserError) {
  CliResult r = run_dragon("profile --activities kernel,bogus --out " + ::testing::TempDir() + "p3 -- true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("unknown activity 'bogus'"), std::string::npos) << r.output;
}

TEST(ProfileCli, NoGpuIsAClearUserError) {
  if (!profile::why_no_cuda_gpu().has_value()) GTEST_SKIP() << "this machine has a GPU";
  CliResult r = run_dragon("profile --out " + ::testing::TempDir() + "p2 -- true");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("dragon profile needs a CUDA GPU"), std::string::npos) << r.output;
}

TEST(ProfileCli, AnalysesAnExistingTraceFolder) {
  std::string dir = make_trace_dir("traces_ok");
  CliResult r = run_dragon("profile --from " + dir + " --nvtx-range measure --speedup norm_softmax=2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("addressable fraction: 22.2%"), std::string::npos) << r.output;  // 200 of 900 ns
  EXPECT_NE(r.output.find("gemm"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));
}

TEST(ProfileCli, BadAnalysisInputsAreUserErrors) {
  EXPECT_EQ(run_dragon("profile --from /nonexistent/traces").status, 1);
  std::string dir = make_trace_dir("traces_bad_flags");
  CliResult speedup = run_dragon("profile --from " + dir + " --speedup fast");
  EXPECT_EQ(speedup.status, 1);
  EXPECT_NE(speedup.output.find("is not CATEGORY=SPEEDUP"), std::string::npos) << speedup.output;
  CliResult range = run_dragon("profile --from " + dir + " --nvtx-range warmup");
  EXPECT_EQ(range.status, 1);
  EXPECT_NE(range.output.find("no NVTX range named 'warmup'"), std::string::npos) << range.output;
  EXPECT_EQ(run_dragon("profile --from " + dir + " --top 0").status, 1);
  EXPECT_EQ(run_dragon("profile --from " + dir + " -- ls").status, 1);
}

}  // namespace
}  // namespace dragon::testing
