// dragon verify as a user meets it: bad input is a user error (exit 1) with a message
// that says what to do; a compile error is reported before anything runs; the text
// verdict says which checks ran. The exploit suite itself is tests/unit/harness/exploit_files.
#include <gtest/gtest.h>

#include "dragon/runtime/cuda_driver.h"
#include "error/cli_runner.h"

namespace dragon::testing {
namespace {

std::string exploit(const std::string& relative) {
  return std::string(DRAGON_SOURCE_DIR) + "/tests/harness_exploits/" + relative;
}

void expect_user_error(const CliResult& result, const std::string& says) {
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("error: "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find(says), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("bug in Little Dragon"), std::string::npos) << result.output;
}

TEST(VerifyCli, MissingKernelFile) {
  expect_user_error(run_dragon("verify relu:shape=4x256 --kernel /nonexistent/relu.cc"), "no such file");
}

TEST(VerifyCli, UnknownExtension) {
  std::string path = write_temp_file("kernel.py", "def relu(x): return x\n");
  expect_user_error(run_dragon("verify relu:shape=4x256 --kernel " + path), ".cu");
}

TEST(VerifyCli, KernelIsRequired) {
  CliResult result = run_dragon("verify relu:shape=4x256");
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("--kernel"), std::string::npos) << result.output;
}

TEST(VerifyCli, BadSpec) {
  CliResult result = run_dragon("verify nosuchop:shape=4 --kernel " + exploit("cpu/honest_relu.cc"));
  EXPECT_EQ(result.status, 1) << result.output;
}

TEST(VerifyCli, CudaKernelNeedsItsLaunchShape) {
  expect_user_error(run_dragon("verify relu:shape=4x256 --kernel " + exploit("cuda/honest_relu.cu")), "--grid");
  expect_user_error(run_dragon("verify relu:shape=4x256 --kernel " + exploit("cuda/honest_relu.cu") + " --grid 4"),
                    "--block");
}

TEST(VerifyCli, BadGridSyntax) {
  const std::string kernel = " --kernel " + exploit("cuda/honest_relu.cu") + " --block 256";
  expect_user_error(run_dragon("verify relu:shape=4x256" + kernel + " --grid 4,x"), "'x' is not an integer");
  expect_user_error(run_dragon("verify relu:shape=4x256" + kernel + " --grid 4,0"), "not positive");
  expect_user_error(run_dragon("verify relu:shape=4x256" + kernel + " --grid 1,1,1,1"), "more than three");
  expect_user_error(run_dragon("verify relu:shape=4x256" + kernel + " --grid ''"), "--grid");
}

TEST(VerifyCli, LaunchShapeIsForCudaOnly) {
  expect_user_error(run_dragon("verify relu:shape=4x256 --kernel " + exploit("cpu/honest_relu.cc") + " --grid 4"),
                    "CUDA kernels");
}

TEST(VerifyCli, BadTimeout) {
  expect_user_error(
      run_dragon("verify relu:shape=4x256 --kernel " + exploit("cpu/honest_relu.cc") + " --timeout 0"), "--timeout");
}

TEST(VerifyCli, CompileErrorIsReportedBeforeAnyRun) {
  std::string path = write_temp_file("broken_kernel.cc",
                                     "extern \"C\" void dragon_entry(void* const* args) { undeclared_thing(); }\n");
  CliResult result = run_dragon("verify relu:shape=4x256 --kernel " + path);
  expect_user_error(result, "does not compile, or has no entry 'dragon_entry' (nothing was run)");
  EXPECT_NE(result.output.find("undeclared_thing"), std::string::npos) << result.output;  // the compiler's log
  EXPECT_EQ(result.output.find("input set"), std::string::npos) << result.output;
}

TEST(VerifyCli, MissingEntryIsACompileTimeError) {
  CliResult result =
      run_dragon("verify relu:shape=4x256 --kernel " + exploit("cpu/honest_relu.cc") + " --entry no_such_entry");
  expect_user_error(result, "has no entry 'no_such_entry' (nothing was run)");
}

TEST(VerifyCli, CudaKernelWithoutAGpuSuggestsTheCpuVariant) {
  if (runtime::cuda_device_available()) GTEST_SKIP() << "this machine has a CUDA device";
  CliResult result =
      run_dragon("verify relu:shape=4x256 --kernel " + exploit("cuda/honest_relu.cu") + " --grid 4 --block 256");
  expect_user_error(result, "no CUDA device");
  EXPECT_NE(result.output.find("C++ variant for the CPU"), std::string::npos) << result.output;
}

TEST(VerifyCli, TextVerdictSaysWhatWasChecked) {
  CliResult result = run_dragon("verify relu:shape=4x256 --kernel " + exploit("cpu/honest_relu.cc") + " --seed 5");
  EXPECT_EQ(result.status, 0) << result.output;
  for (const char* says : {"checks: 9 input sets (normal, uniform, offset, edge, rand, and 4 siblings", "determinism",
                           "trivial-output audit", "fresh dragon-kernel-runner process", "from the given seed",
                           "PASS", "seed 5"}) {
    EXPECT_NE(result.output.find(says), std::string::npos) << says << "\n" << result.output;
  }
}

TEST(VerifyCli, TextRejectionGivesReasonsAndTheSeed) {
  CliResult result = run_dragon("verify relu:shape=4x256 --kernel " + exploit("cpu/partial_write.cc") + " --seed 9");
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("FAIL"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("unwritten output"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("reproduce with --seed 9"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("error: "), std::string::npos) << result.output;  // a verdict, not a user error
}

// --ir stands for the spec, as in the other subcommands.
TEST(VerifyCli, ReferenceFromAnIrFile) {
  CliResult shown = run_dragon("show relu:shape=4x256");
  ASSERT_EQ(shown.status, 0) << shown.output;
  std::string ir = write_temp_file("relu_for_verify.ir", shown.output);
  CliResult result = run_dragon("verify --ir " + ir + " --kernel " + exploit("cpu/identity.cc"));
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("FAIL identity.cc:dragon_entry on relu: wrong values"), std::string::npos)
      << result.output;
}

// softmax over rows of one element is all ones, which the trivial output "ones" matches:
// a pass there proves nothing, so it is not a success.
TEST(VerifyCli, PassOnAWeakProblemIsNotASuccess) {
  std::string path = write_temp_file("softmax_of_one.cc",
                                     "extern \"C\" void dragon_entry(void* const* args) {\n"
                                     "  float* y = static_cast<float*>(args[1]);\n"
                                     "  for (int i = 0; i < 8; ++i) y[i] = 1.0f;\n"
                                     "}\n");
  CliResult result = run_dragon("verify softmax:shape=8x1,axis=1 --kernel " + path);
  EXPECT_EQ(result.status, 1) << result.output;
  EXPECT_NE(result.output.find("PASS"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("WEAK PROBLEM"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("not trusted"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace dragon::testing
