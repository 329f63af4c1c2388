// The runner protocol: jobs and replies survive encoding, anything else is refused, and
// the argument layout is the tensors' bytes at 256-byte-aligned offsets and nothing more,
// or each tensor inside its red zone (guards, page ends). The timing job (kTimeCuda)
// round-trips with its sets, variants, patches, call slots and timer settings, and a job
// whose slices do not fit together is refused; its reply carries samples, GPU state and
// red-zone violations.
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
  EXPECT_EQ(decoded->red_zones, RedZones::kNone);
  EXPECT_TRUE(decoded->zones.empty());
}

TEST(KernelRunnerProtocol, RunJobWithRedZonesRoundTripsAndMisfitsAreRefused) {
  for (RedZones red_zones : {RedZones::kGuards, RedZones::kPageEnd}) {
    SCOPED_TRACE(std::string(red_zones_name(red_zones)));
    ArgumentLayout layout = layout_slices({4096, 100}, red_zones);
    Job job = sample_job();
    job.arguments = layout.slices;
    job.zones = layout.zones;
    job.red_zones = red_zones;
    job.region_bytes = layout.total_bytes;
    ASSERT_EQ(job_problem(job), "");
    std::optional<Job> decoded = decode_job(encode_job(job));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->red_zones, red_zones);
    EXPECT_EQ(decoded->zones, job.zones);
    Job missing = job;
    missing.zones.pop_back();
    EXPECT_NE(job_problem(missing).find("one red zone per argument"), std::string::npos);
    EXPECT_FALSE(decode_job(encode_job(missing)).has_value());
    Job outside = job;
    outside.arguments[1].offset = outside.zones[1].offset + outside.zones[1].bytes - 50;
    EXPECT_NE(job_problem(outside).find("outside its red zone"), std::string::npos);
    Job overlapping = job;
    overlapping.zones[1] = overlapping.zones[0];
    overlapping.arguments[1] = {overlapping.arguments[0].offset, 100};
    EXPECT_NE(job_problem(overlapping).find("overlap"), std::string::npos) << job_problem(overlapping);
  }
  ArgumentLayout guards = layout_slices({100}, RedZones::kGuards);  // 4096 + 256 + 4096 bytes
  Job unaligned = sample_job();
  unaligned.arguments = guards.slices;
  unaligned.zones = guards.zones;
  unaligned.red_zones = RedZones::kPageEnd;  // guard zones are not whole pages
  unaligned.region_bytes = guards.total_bytes;
  EXPECT_NE(job_problem(unaligned).find("not whole pages"), std::string::npos) << job_problem(unaligned);
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
  EXPECT_EQ(decoded->red_zone_violations, "");
  reply.red_zone_violations = "wrote 4 bytes past the end of parameter 1 in buffer group 2";
  EXPECT_EQ(decode_reply(encode_reply(reply))->red_zone_violations, reply.red_zone_violations);
  EXPECT_FALSE(decode_reply("hello").has_value());
  EXPECT_FALSE(decode_reply(encode_reply(reply) + encode_reply(reply)).has_value());
}

// Two sets of (X: 4096 bytes, Y: 100 bytes), four variants (the sets, then a sibling of
// each with one element of X patched), then 3 calls x one slot for Y.
Job sample_timing_job() {
  Job job = sample_job();
  job.kind = JobKind::kTimeCuda;
  ArgumentLayout layout = layout_slices({4096, 100, 4096, 100, 100, 100, 100});
  job.arguments.assign(layout.slices.begin(), layout.slices.begin() + 4);
  job.call_slots.assign(layout.slices.begin() + 4, layout.slices.end());
  job.region_bytes = layout.total_bytes;
  job.input_sets = 2;
  job.variant_bases = {0, 1, 0, 1};
  job.patches = {ElementPatch{2, 0, 40, 4, 0x3f800000u}, ElementPatch{3, 0, 4092, 4, 0xbf800000u}};
  job.red_zones = RedZones::kGuards;
  job.recorded_params = {1};
  job.timer = GpuTimerOptions{.warmup_calls = 2, .min_calls = 2, .max_calls = 3, .max_seconds = 0.5,
                              .target_relative_ci = 0.02, .flush_l2 = false};
  return job;
}

TEST(KernelRunnerProtocol, TimingJobRoundTrips) {
  Job job = sample_timing_job();
  ASSERT_EQ(job_problem(job), "");
  std::optional<Job> decoded = decode_job(encode_job(job));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->kind, JobKind::kTimeCuda);
  EXPECT_EQ(decoded->cubin, job.cubin);
  EXPECT_EQ(decoded->arguments, job.arguments);
  EXPECT_EQ(decoded->call_slots, job.call_slots);
  EXPECT_EQ(decoded->region_bytes, job.region_bytes);
  EXPECT_EQ(decoded->input_sets, 2u);
  EXPECT_EQ(decoded->variant_bases, job.variant_bases);
  EXPECT_EQ(decoded->patches, job.patches);
  EXPECT_EQ(decoded->red_zones, RedZones::kGuards);
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
    EXPECT_NE(job_problem(job).find(why), std::string::npos) << job_problem(job);
    EXPECT_FALSE(decode_job(encode_job(job)).has_value()) << why;
  };
  Job one_variant = sample_timing_job();
  one_variant.variant_bases = {0};
  one_variant.patches.clear();
  refused(one_variant, "at least two variants");
  Job dividing = sample_timing_job();
  dividing.variant_bases = {0, 1, 0};  // three groups, three variants: group 0 would hold variant 0 again
  dividing.patches.pop_back();
  refused(dividing, "divides the number of buffer groups");
  Job foreign_base = sample_timing_job();
  foreign_base.variant_bases[2] = 2;
  refused(foreign_base, "base set is not one of the input sets");
  Job stray_patch = sample_timing_job();
  stray_patch.patches[0].variant = 4;
  refused(stray_patch, "names no variant");
  Job wide_patch = sample_timing_job();
  wide_patch.patches[0].bytes = 3;
  refused(wide_patch, "1, 2, 4 or 8 bytes");
  Job outside_patch = sample_timing_job();
  outside_patch.patches[1].byte_offset = 4094;
  refused(outside_patch, "outside its parameter");
  Job region_zones = sample_timing_job();
  region_zones.zones = {region_zones.arguments[0]};
  refused(region_zones, "red zones are on the device");
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
  run.red_zones = RedZones::kNone;
  run.input_sets = 1;
  EXPECT_EQ(job_problem(run), "");
}

TEST(KernelRunnerProtocol, TimingRotationNeverRepeatsAVariantInAGroup) {
  for (uint64_t sets = 1; sets <= 4; ++sets) {
    for (uint64_t variants = 2; variants <= 3 * sets + 3; ++variants) {
      if ((sets + 1) % variants == 0) continue;  // refused by job_problem
      for (uint64_t call = 0; call < 100; ++call) {
        EXPECT_EQ(timed_variant(call, variants), call % variants);
        // The next use of this call's group holds another variant.
        EXPECT_EQ(timed_buffer_group(call + sets + 1, sets), timed_buffer_group(call, sets));
        EXPECT_NE(timed_variant(call + sets + 1, variants), timed_variant(call, variants)) << sets << " " << variants;
        EXPECT_NE(timed_buffer_group(call + sets, sets), timed_buffer_group(call, sets));
      }
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
  EXPECT_EQ(layout.zones.size(), 4u);
  EXPECT_EQ(layout.zones[0], (ArgumentSlice{0, 256}));
}

// Guards: 4 KiB before each tensor and 4 KiB after its 256-byte-rounded end, all of it
// the tensor's zone; tensors still aligned to 256 bytes.
TEST(KernelRunnerProtocol, GuardLayoutPutsGuardBytesAroundEachTensor) {
  ArgumentLayout layout = layout_slices({6, 256, 0}, RedZones::kGuards);
  ASSERT_EQ(layout.slices.size(), 3u);
  EXPECT_EQ(layout.zones[0], (ArgumentSlice{0, 4096 + 256 + 4096}));
  EXPECT_EQ(layout.slices[0], (ArgumentSlice{4096, 6}));
  EXPECT_EQ(layout.zones[1], (ArgumentSlice{8448, 8448}));
  EXPECT_EQ(layout.slices[1], (ArgumentSlice{8448 + 4096, 256}));
  EXPECT_EQ(layout.slices[2], (ArgumentSlice{16896 + 4096, 0}));
  EXPECT_EQ(layout.total_bytes, 16896u + 8192u);
  for (const RedZone& z : layout.red_zone_list()) EXPECT_EQ(z.data_offset % kArgumentAlignment, 0u);
}

// Page ends: each tensor in whole pages of its own, ending where they end (a tensor whose
// size is not a multiple of 256 bytes ends up to 255 bytes before).
TEST(KernelRunnerProtocol, PageEndLayoutEndsEachTensorWithItsPages) {
  const uint64_t page = host_page_bytes();
  ArgumentLayout layout = layout_slices({page, 100, 3 * page + 256, 0}, RedZones::kPageEnd);
  ASSERT_EQ(layout.slices.size(), 4u);
  EXPECT_EQ(layout.zones[0], (ArgumentSlice{0, page}));
  EXPECT_EQ(layout.slices[0], (ArgumentSlice{0, page}));
  EXPECT_EQ(layout.zones[1], (ArgumentSlice{page, page}));
  EXPECT_EQ(layout.slices[1], (ArgumentSlice{2 * page - 256, 100}));
  EXPECT_EQ(layout.zones[2], (ArgumentSlice{2 * page, 4 * page}));
  EXPECT_EQ(layout.slices[2], (ArgumentSlice{6 * page - (3 * page + 256), 3 * page + 256}));
  EXPECT_EQ(layout.zones[3], (ArgumentSlice{6 * page, page}));
  EXPECT_EQ(layout.total_bytes, 7 * page);
}

// Every byte of a zone outside its tensor starts as the guard byte; changed ones are
// reported with the tensor they border and how far out they reach.
TEST(RedZones, FilledGuardBytesAreCheckedOnBothSides) {
  ArgumentLayout layout = layout_slices({64, 64}, RedZones::kGuards);
  std::vector<unsigned char> region(layout.total_bytes, 0);
  fill_red_zones(region.data(), layout.red_zone_list());
  const std::vector<std::string> names = {"input x", "output y"};
  EXPECT_EQ(red_zone_violations(region.data(), layout.red_zone_list(), names), "");
  EXPECT_EQ(region[layout.zones[0].offset], kGuardByte);
  EXPECT_EQ(region[layout.slices[0].offset], 0) << "the tensor itself is not touched";
  region[layout.slices[1].offset + 64] = 1;       // the first byte past y
  region[layout.slices[1].offset + 64 + 7] = 1;   // the eighth
  region[layout.slices[0].offset - 3] = 1;        // three bytes before x
  EXPECT_EQ(red_zone_violations(region.data(), layout.red_zone_list(), names),
            "wrote 1 byte before the start of input x (from byte 3 before it); "
            "wrote 2 bytes past the end of output y (up to byte 8 after it)");
}

}  // namespace
}  // namespace dragon::harness::kernel_runner
