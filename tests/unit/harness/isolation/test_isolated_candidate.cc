// Isolated candidates on the CPU: an honest kernel's outputs come back; a crash, a hang,
// an abort, an early exit, a forged handshake and a compile error each become the right
// outcome with a reason, and the next candidate still runs. Also what the child can see.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "dragon/harness/command_line_secret.h"
#include "dragon/harness/isolated_candidate.h"
#include "dragon/harness/kernel_runner_protocol.h"
#include "dragon/support/error.h"
#include "dragon/support/subprocess.h"
#include "isolation_test_util.h"

namespace dragon::harness {
namespace {

// What a kernel must never read: it stands for the reference's outputs and the seeds.
char parent_secret[] = "dragon-parent-secret-7f3a";

using testing::kernel_path;
using testing::relu_arguments;
using testing::test_options;

std::unique_ptr<Candidate> cpu_candidate(const std::string& file, const std::string& entry) {
  return make_isolated_candidate(read_isolated_kernel(kernel_path(file), entry), test_options());
}

void expect_relu_outputs(const std::vector<tensor::HostTensor>& args) {
  for (int64_t i = 0; i < args[0].num_elements(); ++i) {
    ASSERT_EQ(args[1].get(i), std::max(args[0].get(i), 0.0)) << "element " << i;
  }
}

void expect_outputs_untouched(const std::vector<tensor::HostTensor>& args) {
  for (int64_t i = 0; i < args[1].num_elements(); ++i) ASSERT_TRUE(std::isnan(args[1].get(i))) << "element " << i;
}

TEST(IsolatedCandidate, HonestKernelWritesCorrectOutputs) {
  std::unique_ptr<Candidate> candidate = cpu_candidate("relu.cc", "relu");
  EXPECT_EQ(candidate->name(), "relu.cc:relu");
  std::vector<tensor::HostTensor> args = relu_arguments();
  tensor::HostTensor input_before = args[0];
  RunOutcome outcome = candidate->run(args);
  ASSERT_TRUE(outcome.ok()) << run_status_name(outcome.status) << ": " << outcome.reason;
  expect_relu_outputs(args);
  for (int64_t i = 0; i < args[0].num_elements(); ++i) ASSERT_EQ(args[0].get(i), input_before.get(i));
  // A second run is a new child on new data.
  for (int64_t i = 0; i < args[0].num_elements(); ++i) args[0].set(i, -args[0].get(i));
  args[1].fill(std::nan(""));
  ASSERT_TRUE(candidate->run(args).ok());
  expect_relu_outputs(args);
}

// Our own generated CPU code follows the same convention: a golden generated kernel runs
// isolated as it is, under its generated entry name (dragon_entry, the default).
TEST(IsolatedCandidate, GeneratedKernelRunsIsolatedAsItIs) {
  IsolatedKernel generated = read_isolated_kernel(std::string(DRAGON_SOURCE_DIR) + "/tests/golden/codegen/relu_cpu.cc");
  EXPECT_EQ(generated.entry, "dragon_entry");
  std::unique_ptr<Candidate> candidate = make_isolated_candidate(generated, test_options());
  std::vector<tensor::HostTensor> args = {tensor::HostTensor(ir::DataType::f32(), {16, 64}),
                                          tensor::HostTensor(ir::DataType::f32(), {16, 64})};
  for (int64_t i = 0; i < args[0].num_elements(); ++i) args[0].set(i, static_cast<double>(i % 7) - 3.5);
  args[1].fill(std::nan(""));
  RunOutcome outcome = candidate->run(args);
  ASSERT_TRUE(outcome.ok()) << outcome.reason;
  expect_relu_outputs(args);
}

TEST(IsolatedCandidate, SegfaultIsACrashAndTheNextCandidateStillRuns) {
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = cpu_candidate("segfault.cc", "segfault")->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kCrashed);
  EXPECT_NE(outcome.reason.find("SIGSEGV"), std::string::npos) << outcome.reason;
  // It wrote y[0] before dying; nothing of a failed run reaches the caller.
  expect_outputs_untouched(args);
  RunOutcome next = cpu_candidate("relu.cc", "relu")->run(args);
  ASSERT_TRUE(next.ok()) << next.reason;
  expect_relu_outputs(args);
}

TEST(IsolatedCandidate, EndlessLoopTimesOutWithinTheLimit) {
  std::unique_ptr<Candidate> candidate = cpu_candidate("endless_loop.cc", "endless_loop");
  std::vector<tensor::HostTensor> args = relu_arguments();
  ASSERT_EQ(candidate->run(args).status, RunStatus::kTimedOut);  // compiles on this first run
  auto start = std::chrono::steady_clock::now();
  RunOutcome outcome = candidate->run(args);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(outcome.status, RunStatus::kTimedOut);
  EXPECT_NE(outcome.reason.find("within 1 s"), std::string::npos) << outcome.reason;
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 2.0);
}

TEST(IsolatedCandidate, ExitZeroWithoutHandshakeIsNoHandshake) {
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = cpu_candidate("exit_zero.cc", "exit_zero")->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kNoHandshake);
  EXPECT_NE(outcome.reason.find("without the success handshake"), std::string::npos) << outcome.reason;
  expect_outputs_untouched(args);
}

TEST(IsolatedCandidate, ForgedHandshakeDoesNotCount) {
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = cpu_candidate("forged_handshake.cc", "forged_handshake")->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kNoHandshake);
  EXPECT_NE(outcome.reason.find("wrong nonce"), std::string::npos) << outcome.reason;
}

TEST(IsolatedCandidate, AbortIsACrashWithTheEndOfItsOutput) {
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = cpu_candidate("noisy_abort.cc", "noisy_abort")->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kCrashed);
  EXPECT_NE(outcome.reason.find("SIGABRT"), std::string::npos) << outcome.reason;
  EXPECT_NE(outcome.reason.find("last words before abort"), std::string::npos);
  // The output was truncated to its last bytes: the greeting is gone, the total is said.
  EXPECT_EQ(outcome.reason.find("kernel says hello"), std::string::npos);
  EXPECT_NE(outcome.reason.find("last 4096 of 20043 bytes"), std::string::npos) << outcome.reason.substr(0, 300);
  EXPECT_LT(outcome.reason.size(), 4096u + 400u);
}

TEST(IsolatedCandidate, CompileErrorIsAFailureWithTheCompilerLog) {
  std::unique_ptr<Candidate> candidate = cpu_candidate("compile_error.cc", "compile_error");
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = candidate->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kFailed);
  EXPECT_NE(outcome.reason.find("compile_error.cc:3"), std::string::npos) << outcome.reason;
  EXPECT_NE(outcome.reason.find("undeclared_variable"), std::string::npos) << outcome.reason;
  // Every later run says the same without compiling again.
  EXPECT_EQ(candidate->run(args).reason, outcome.reason);
}

TEST(IsolatedCandidate, MissingEntryIsAFailureNamingIt) {
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome outcome = cpu_candidate("relu.cc", "not_relu")->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kFailed);
  EXPECT_NE(outcome.reason.find("not_relu"), std::string::npos) << outcome.reason;
}

TEST(IsolatedCandidate, ChildSeesOnlyTheRunsTensors) {
  std::vector<tensor::HostTensor> args = {tensor::HostTensor(ir::DataType::f32(), {300}),
                                          tensor::HostTensor(ir::DataType::i64(), {8})};
  RunOutcome outcome = cpu_candidate("probe.cc", "probe")->run(args);
  ASSERT_TRUE(outcome.ok()) << outcome.reason;
  const tensor::HostTensor& seen = args[1];
  int64_t passed_through = 0;
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    passed_through += std::getenv(name) != nullptr;
  }
  EXPECT_EQ(seen.get_int(0), passed_through) << "environment entries";
  EXPECT_EQ(seen.get_int(1), 0) << "environment entries the runner does not need";
  EXPECT_EQ(seen.get_int(2), 1) << "command-line arguments";
  EXPECT_EQ(seen.get_int(3), 0) << "open descriptors besides stdio and the control socket";
  EXPECT_EQ(seen.get_int(4), 1) << "shared memory mappings";
  // The first run has guards: 4 KiB, 1200 bytes rounded up to 1280, 4 KiB, then 4 KiB, 64
  // bytes rounded up to 256, 4 KiB; the mapping is whole pages.
  kernel_runner::ArgumentLayout layout = kernel_runner::layout_arguments(args, RedZones::kGuards);
  EXPECT_EQ(layout.total_bytes, 4096u + 1280u + 4096u + 4096u + 256u + 4096u);
  int64_t page = 4096;
  EXPECT_EQ(seen.get_int(5), (static_cast<int64_t>(layout.total_bytes) + page - 1) / page * page);
  EXPECT_EQ(seen.get_int(6), 2) << "arguments inside the shared region";
  EXPECT_EQ(seen.get_int(7), 2) << "arguments aligned to 256 bytes";
}

// Runs peek_parent.cc and returns what it saw: R[0..3] of the kernel (-100 each when the
// run did not succeed). Without namespaces unless asked: its parent is then this process.
std::array<int64_t, 4> peek_parent(bool hide_parent_memory,
                                   RunnerNamespaces namespaces = RunnerNamespaces::kOff) {
  IsolationOptions options = test_options();
  options.hide_parent_memory = hide_parent_memory;
  options.namespaces = namespaces;
  std::unique_ptr<Candidate> candidate =
      make_isolated_candidate(read_isolated_kernel(kernel_path("peek_parent.cc"), "peek_parent"), options);
  std::vector<tensor::HostTensor> args = {tensor::HostTensor(ir::DataType::i64(), {2}),
                                          tensor::HostTensor(ir::DataType::i64(), {4})};
  args[0].set_int(0, static_cast<int64_t>(reinterpret_cast<uintptr_t>(parent_secret)));
  args[0].set_int(1, static_cast<int64_t>(sizeof parent_secret - 1));
  if (!candidate->run(args).ok()) return {-100, -100, -100, -100};
  return {args[1].get_int(0), args[1].get_int(1), args[1].get_int(2), args[1].get_int(3)};
}

// A parent with capabilities is out of reach of a runner without them whatever else
// happens; a parent without any (an ordinary user) relies on being non-dumpable. This
// forks a parent without capabilities to test that case even when the tests run as root,
// and reports through its exit status: bit 0 the unprotected control read the secret,
// bit 1 the protected run succeeded, bit 2 it opened /proc/PARENT/mem, bit 3 it read the
// secret, bit 4 process_vm_readv read anything.
int peek_from_a_parent_without_capabilities() {
  pid_t pid = ::fork();
  if (pid == 0) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capset, &header, none) != 0) ::_exit(64);
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    std::array<int64_t, 4> exposed = peek_parent(/*hide_parent_memory=*/false);
    std::array<int64_t, 4> hidden = peek_parent(/*hide_parent_memory=*/true);
    int bits = (exposed[2] == 1 ? 1 : 0) | (hidden[0] != -100 ? 2 : 0) | (hidden[0] == 1 ? 4 : 0) |
               (hidden[2] == 1 ? 8 : 0) | (hidden[3] > 0 ? 16 : 0);
    ::_exit(bits);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(IsolatedCandidate, KernelCannotReadTheParentsMemory) {
  // This process as it is (root in CI: the runner, stripped of capabilities, cannot touch it).
  std::array<int64_t, 4> seen = peek_parent(/*hide_parent_memory=*/true);
  EXPECT_EQ(::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
  EXPECT_EQ(seen[0], 0) << "/proc/PARENT/mem opened";
  EXPECT_EQ(seen[2], 0) << "the kernel read the parent's secret";
  EXPECT_LT(seen[3], 0) << "process_vm_readv read the parent";

  int bits = peek_from_a_parent_without_capabilities();
  ASSERT_GE(bits, 0);
  ASSERT_NE(bits, 64) << "could not drop the test parent's capabilities";
  if ((bits & 1) == 0) {
    GTEST_SKIP() << "this system keeps children out of their parent's memory anyway (Yama or an LSM), so "
                    "the non-dumpable parent is not what protects it here";
  }
  EXPECT_TRUE(bits & 2) << "the protected run failed";
  EXPECT_FALSE(bits & 4) << "/proc/PARENT/mem of a non-dumpable parent opened";
  EXPECT_FALSE(bits & 8) << "the kernel read the non-dumpable parent's secret";
  EXPECT_FALSE(bits & 16) << "process_vm_readv read the non-dumpable parent";
}

// Red zones by turns: the first run has guard bytes around every tensor (the write past
// the end of Y is found in them, and the run is kWroteOutOfBounds; the load past the end
// of X reads a guard and harms nothing), the second has every tensor end at a page end
// with nothing mapped after it (both fault). Outputs of such runs never come back.
TEST(IsolatedCandidate, RedZonesCatchWritesByGuardsAndOverrunsByPageEnds) {
  std::unique_ptr<Candidate> writer = cpu_candidate("write_past_end.cc", "write_past_end");
  std::vector<tensor::HostTensor> args = relu_arguments();
  RunOutcome guarded = writer->run(args);
  EXPECT_EQ(guarded.status, RunStatus::kWroteOutOfBounds) << guarded.reason;
  EXPECT_NE(guarded.reason.find("wrote 4 bytes past the end of argument 1 (up to byte 4 after it)"),
            std::string::npos)
      << guarded.reason;
  expect_outputs_untouched(args);
  RunOutcome paged = writer->run(args);
  EXPECT_EQ(paged.status, RunStatus::kCrashed) << paged.reason;
  EXPECT_NE(paged.reason.find("SIGSEGV"), std::string::npos) << paged.reason;

  std::unique_ptr<Candidate> reader = cpu_candidate("read_past_end.cc", "read_past_end");
  RunOutcome first = reader->run(args);
  ASSERT_TRUE(first.ok()) << first.reason;
  expect_relu_outputs(args);
  RunOutcome second = reader->run(args);
  EXPECT_EQ(second.status, RunStatus::kCrashed) << second.reason;

  IsolationOptions bare = test_options();
  bare.red_zones = false;
  args = relu_arguments();
  RunOutcome unguarded =
      make_isolated_candidate(read_isolated_kernel(kernel_path("write_past_end.cc"), "write_past_end"), bare)->run(args);
  EXPECT_TRUE(unguarded.ok()) << "without red zones the write lands in the region's padding: " << unguarded.reason;
}

std::array<int64_t, 4> count_processes(RunnerNamespaces namespaces) {
  IsolationOptions options = test_options();
  options.namespaces = namespaces;
  std::vector<tensor::HostTensor> args = {tensor::HostTensor(ir::DataType::f32(), {4}),
                                          tensor::HostTensor(ir::DataType::i64(), {4})};
  RunOutcome outcome =
      make_isolated_candidate(read_isolated_kernel(kernel_path("count_processes.cc"), "count_processes"), options)
          ->run(args);
  EXPECT_TRUE(outcome.ok()) << outcome.reason;
  return {args[1].get_int(0), args[1].get_int(1), args[1].get_int(2), args[1].get_int(3)};
}

// In namespaces of its own the runner is the second of two processes its /proc lists:
// the namespace's first process (its parent, PID 1, whose command line is wiped) and
// itself. No other process's command line, environment or files are in sight.
TEST(IsolatedCandidate, InItsNamespacesTheKernelSeesNoOtherProcess) {
  if (!uses_runner_namespaces(test_options(), KernelLanguage::kCpu)) {
    GTEST_SKIP() << describe_runner_isolation(test_options(), KernelLanguage::kCpu);
  }
  std::array<int64_t, 4> seen = count_processes(RunnerNamespaces::kWhereAvailable);
  EXPECT_EQ(seen[0], 2) << "processes in /proc";
  EXPECT_EQ(seen[1], 1) << "the parent is the namespace's first process";
  EXPECT_EQ(seen[2], 2) << "its own pid";
  EXPECT_EQ(seen[3], 0) << "the first process's command line (a copy of this test's) is wiped";
  EXPECT_NE(describe_runner_isolation(test_options(), KernelLanguage::kCpu).find("own user, PID and mount namespaces"),
            std::string::npos);
  // Without them it sees this test's process, and every other.
  std::array<int64_t, 4> outside = count_processes(RunnerNamespaces::kOff);
  EXPECT_GT(outside[0], 2);
  EXPECT_EQ(outside[1], ::getpid());
  EXPECT_GT(outside[3], 0) << "the parent's command line is readable there: hence hide_option_value_in_command_line";
}

// The value of an option on this process's command line is overwritten where /proc shows
// it (ctest gives each case its --gtest_filter=NAME, the option used here).
TEST(CommandLineSecret, OptionValueIsHiddenFromProc) {
  auto cmdline = [] {
    std::FILE* f = std::fopen("/proc/self/cmdline", "r");
    std::string text;
    for (int c; f != nullptr && (c = std::fgetc(f)) != EOF;) text += c == 0 ? ' ' : static_cast<char>(c);
    if (f != nullptr) std::fclose(f);
    return text;
  };
  const std::string before = cmdline();
  if (before.find("--gtest_filter=") == std::string::npos) GTEST_SKIP() << "no --gtest_filter=... here: " << before;
  EXPECT_EQ(hide_option_value_in_command_line("--gtest_filter"), 1);
  const std::string after = cmdline();
  EXPECT_EQ(after.find("OptionValueIsHiddenFromProc"), std::string::npos) << after;
  EXPECT_NE(after.find("--gtest_filter=***"), std::string::npos) << after;
  EXPECT_EQ(after.size(), before.size());
  EXPECT_EQ(hide_option_value_in_command_line("--no-such-option"), 0);
}

// In namespaces of its own, the runner's parent is the namespace's first process, which
// holds every capability of the namespace: a runner without any cannot read it even when
// it is dumpable (hide_parent_memory off), on top of its being non-dumpable by default.
TEST(IsolatedCandidate, InNamespacesEvenADumpableParentIsOutOfReach) {
  if (!uses_runner_namespaces(test_options(), KernelLanguage::kCpu)) {
    GTEST_SKIP() << describe_runner_isolation(test_options(), KernelLanguage::kCpu);
  }
  std::array<int64_t, 4> seen = peek_parent(/*hide_parent_memory=*/false, RunnerNamespaces::kWhereAvailable);
  EXPECT_NE(seen[0], -100) << "the run failed";
  EXPECT_EQ(seen[0], 0) << "/proc/PARENT/mem opened";
  EXPECT_EQ(seen[2], 0) << "the kernel read the parent's secret";
  EXPECT_LT(seen[3], 0) << "process_vm_readv read the parent";
}

TEST(IsolatedCandidate, MissingRunnerIsReportedWithItsPath) {
  IsolationOptions options = test_options();
  options.runner_path = std::string(DRAGON_BINARY_DIR) + "/no-such-runner";
  std::unique_ptr<Candidate> candidate =
      make_isolated_candidate(read_isolated_kernel(kernel_path("relu.cc"), "relu"), options);
  std::vector<tensor::HostTensor> args = relu_arguments();
  // Compiling needs the runner too: the failure surfaces as the run's kFailed.
  RunOutcome outcome = candidate->run(args);
  EXPECT_EQ(outcome.status, RunStatus::kFailed);
  EXPECT_NE(outcome.reason.find("no-such-runner"), std::string::npos) << outcome.reason;
}

TEST(KernelRunner, RefusesToBeStartedByHand) {
  ProcessResult result = run_process({DRAGON_KERNEL_RUNNER_PATH}, {});
  ASSERT_TRUE(result.started) << result.start_error;
  EXPECT_EQ(result.exit_code, 2);
}

TEST(IsolatedKernelFile, LanguageComesFromTheExtension) {
  EXPECT_EQ(read_isolated_kernel(kernel_path("relu.cc"), "relu").language, KernelLanguage::kCpu);
  IsolatedKernel cuda = read_isolated_kernel(kernel_path("relu.cu"), "relu");
  EXPECT_EQ(cuda.language, KernelLanguage::kCuda);
  EXPECT_EQ(cuda.source_name, "relu.cu");
  EXPECT_NE(cuda.source.find("__global__"), std::string::npos);
  EXPECT_THROW(read_isolated_kernel(kernel_path("probe.txt"), "x"), UserError);
  EXPECT_THROW(read_isolated_kernel(kernel_path("missing.cc"), "x"), UserError);
  EXPECT_THROW(read_isolated_kernel(kernel_path("relu.cc"), ""), UserError);
}

}  // namespace
}  // namespace dragon::harness
