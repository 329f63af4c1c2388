// The runner protocol: jobs and replies survive encoding, anything else is refused, and
// the argument layout is the tensors' bytes at 256-byte-aligned offsets and nothing more.
// The timing job (kTimeCuda) round-trips with its sets, call slots and timer settings, and
// a job whose slices do not fit together is refused; its reply carries samples and GPU state.
#include <gtest/gtest.h>

#include "dragon/harness/kernel_runner_protocol.h"

namespace dragon::harness::kernel_runner {
namespace {

Job sample_job() {
  Job job;
  job.kind = JobKind::kRunCuda;
  job.nonce = 0x0123456789abcdefULL;
  job.entry = "relu";
  job.cubin = std::string{'\x7f', 'E', 'L', 'F', '\0', '\1'};  // an embedded NUL must survive
  job.grid = {4, 2, 1};
  job.block = {256, 1, 1};
  job.dynamic_shared_bytes = 64 * 1024;
  job.arguments = {{0, 4096}, {4096, 100}};
  job.region_bytes = 4352;
  return job;
}

TEST(KernelRunnerProtocol, JobRoundTrips) {
  Job job = sample_job();
  std::optional<Job> decoded = decode_job(encode_job(job));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->kind, job.kind);
  EXPECT_EQ(decoded->nonce, job.nonce);
  EXPECT_EQ(decoded->entry, job.entry);
  EXPECT_EQ(decoded->cubin, job.cubin);
  EXPECT_EQ(decoded->grid, job.grid);
  EXPECT_EQ(decoded->block, job.block);
  EXPECT_EQ(decoded->dynamic_shared_bytes, job.dynamic_shared_bytes);
  EXPECT_EQ(decoded->arguments, job.arguments);
  EXPECT_EQ(decoded->region_bytes, job.region_bytes);
}

TEST(KernelRunnerProtocol, RefusesTruncatedExtendedOrInconsistentJobs) {
  std::string bytes = encode_job(sample_job());
  EXPECT_FALSE(decode_job(bytes.substr(0, bytes.size() - 1)).has_value());
  EXPECT_FALSE(decode_job(bytes + "x").has_value());
  EXPECT_FALSE(decode_job("").has_value());
  Job outside = sample_job();
  outside.arguments.push_back({4300, 100});  // past the region's end
  EXPECT_FALSE(decode_job(encode_job(outside)).has_value());
}

TEST(KernelRunnerProtocol, ReplyRoundTripsAndRefusesJunk) {
  Reply reply;
  reply.nonce = 42;
  reply.status = ReplyStatus::kFaulted;
  reply.failure =
      RuntimeFailure{"cuCtxSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS (700)", "a log", "driver.cc:9"};
  reply.module_path = "/cache/x.so";
  std::optional<Reply> decoded = decode_reply(encode_reply(reply));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->nonce, 42u);
  EXPECT_EQ(decoded->status, ReplyStatus::kFaulted);
  EXPECT_EQ(decoded->failure.describe(), reply.failure.describe());
  EXPECT_EQ(decoded->failure.log, "a log");
  EXPECT_EQ(decoded->module_path, reply.module_path);
  EXPECT_FALSE(decode_reply("hello").has_value());
  EXPECT_FALSE(decode_reply(encode_reply(reply) + encode_reply(reply)).has_value());
}

// Two sets of (X: 4096 bytes, Y: 100 bytes), then 3 calls x one slot for Y.
Job sample_timing_job() {
  Job job = sample_job();
  job.kind = JobKind::kTimeCuda;
  ArgumentLayout layout = layout_slices({4096, 100, 4096, 100, 100, 100, 100});
  job.arguments.assign(layout.slices.begin(), layout.slices.begin() + 4);
  job.call_slots.assign(layout.slices.begin() + 4, layout.slices.end());
  job.region_bytes = layout.total_bytes;
  job.input_sets = 2;
  job.recorded_params = {1};
  job.timer = GpuTimerOptions{.warmup_calls = 2, .min_calls = 2, .max_calls = 3, .max_seconds = 0.5,
                              .target_relative_ci = 0.02, .flush_l2 = false};
  return job;
}

TEST(KernelRunnerProtocol, TimingJobRoundTrips) {
  Job job = sample_timing_job();
  ASSERT_EQ(timing_job_problem(job), "");
  std::optional<Job> decoded = decode_job(encode_job(job));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->kind, JobKind::kTimeCuda);
  EXPECT_EQ(decoded->cubin, job.cubin);
  EXPECT_EQ(decoded->arguments, job.arguments);
  EXPECT_EQ(decoded->call_slots, job.call_slots);
  EXPECT_EQ(decoded->region_bytes, job.region_bytes);
  EXPECT_EQ(decoded->input_sets, 2u);
  EXPECT_EQ(decoded->recorded_params, std::vector<uint64_t>{1});
  EXPECT_EQ(decoded->timer.warmup_calls, 2);
  EXPECT_EQ(decoded->timer.min_calls, 2);
  EXPECT_EQ(decoded->timer.max_calls, 3);
  EXPECT_EQ(decoded->timer.max_seconds, 0.5);
  EXPECT_EQ(decoded->timer.target_relative_ci, 0.02);
  EXPECT_FALSE(decoded->timer.flush_l2);
}

TEST(KernelRunnerProtocol, RefusesTimingJobsWhoseSlicesDoNotFit) {
  auto refused = [](const Job& job, const std::string& why) {
    EXPECT_NE(timing_job_problem(job).find(why), std::string::npos) << timing_job_problem(job);
    EXPECT_FALSE(decode_job(encode_job(job)).has_value()) << why;
  };
  Job one_set = sample_timing_job();
  one_set.input_sets = 1;
  refused(one_set, "at least two input sets");
  Job uneven = sample_timing_job();
  uneven.input_sets = 3;  // 4 slices are not 3 sets
  refused(uneven, "not input_sets equal sets");
  Job unequal = sample_timing_job();
  unequal.arguments[3].bytes = 99;
  refused(unequal, "differ in size");
  Job foreign = sample_timing_job();
  foreign.recorded_params = {2};
  refused(foreign, "not one of the kernel's");
  Job missing_slot = sample_timing_job();
  missing_slot.call_slots.pop_back();
  refused(missing_slot, "one call slot per timed call");
  Job wrong_size = sample_timing_job();
  wrong_size.call_slots[0].bytes = 4096;
  refused(wrong_size, "size is not that of its parameter");
  Job overlapping = sample_timing_job();
  overlapping.call_slots[1] = overlapping.arguments[1];  // a call's outputs written over set 0's Y
  refused(overlapping, "overlap");
  Job no_calls = sample_timing_job();
  no_calls.timer.min_calls = 4;  // above max_calls
  refused(no_calls, "timer settings");
  // The same slices are no business of the other jobs.
  Job run = sample_timing_job();
  run.kind = JobKind::kRunCuda;
  run.input_sets = 1;
  EXPECT_EQ(timing_job_problem(run), "");
}

TEST(KernelRunnerProtocol, TimingRotationNeverRepeatsASetInAGroup) {
  for (uint64_t sets = 2; sets <= 4; ++sets) {
    for (uint64_t call = 0; call < 100; ++call) {
      EXPECT_EQ(timed_input_set(call, sets), call % sets);
      // The next use of this call's group holds another set; the next call of this set runs in another group.
      EXPECT_NE(timed_input_set(call + sets + 1, sets), timed_input_set(call, sets));
      EXPECT_EQ(timed_buffer_group(call + sets + 1, sets), timed_buffer_group(call, sets));
      EXPECT_NE(timed_buffer_group(call + sets, sets), timed_buffer_group(call, sets));
    }
  }
}

TEST(KernelRunnerProtocol, TimingReplyCarriesSamplesAndGpuState) {
  Reply reply;
  reply.nonce = 7;
  reply.status = ReplyStatus::kSuccess;
  reply.samples_ms = {0.125, 0.25, 0.1875};
  reply.gpu_state = GpuState{.name = "NVIDIA H200", .sm_clock_mhz = 1980, .max_sm_clock_mhz = 1980,
                             .memory_clock_mhz = 3201, .temperature_c = 41, .driver_version = "580.1"};
  std::optional<Reply> decoded = decode_reply(encode_reply(reply));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->samples_ms, reply.samples_ms);
  EXPECT_EQ(decoded->gpu_state.name, "NVIDIA H200");
  EXPECT_EQ(decoded->gpu_state.sm_clock_mhz, 1980);
  EXPECT_EQ(decoded->gpu_state.max_sm_clock_mhz, 1980);
  EXPECT_EQ(decoded->gpu_state.memory_clock_mhz, 3201);
  EXPECT_EQ(decoded->gpu_state.temperature_c, 41);
  EXPECT_EQ(decoded->gpu_state.driver_version, "580.1");
  std::string bytes = encode_reply(reply);
  EXPECT_FALSE(decode_reply(bytes.substr(0, bytes.size() - 1)).has_value());
}

TEST(KernelRunnerProtocol, LayoutHoldsTheTensorsAlignedAndNothingElse) {
  std::vector<tensor::HostTensor> args = {tensor::HostTensor(ir::DataType::f16(), {3}),    // 6 bytes
                                          tensor::HostTensor(ir::DataType::f32(), {64}),   // 256 bytes
                                          tensor::HostTensor(ir::DataType::i64(), {0}),    // empty
                                          tensor::HostTensor(ir::DataType::f64(), {33})};  // 264 bytes
  ArgumentLayout layout = layout_arguments(args);
  ASSERT_EQ(layout.slices.size(), 4u);
  EXPECT_EQ(layout.slices[0], (ArgumentSlice{0, 6}));
  EXPECT_EQ(layout.slices[1], (ArgumentSlice{256, 256}));
  EXPECT_EQ(layout.slices[2], (ArgumentSlice{512, 0}));
  EXPECT_EQ(layout.slices[3], (ArgumentSlice{512, 264}));
  EXPECT_EQ(layout.total_bytes, 512u + 512u);
}

}  // namespace
}  // namespace dragon::harness::kernel_runner
