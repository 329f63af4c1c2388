// The CUDA timing job (runner_jobs.h, JobKind::kTimeCuda): the kernel timed by the harness's
// one GPU timer (time_gpu) over the job's rotated variants, each timed call's recorded
// parameters copied into that call's slot of the region for the parent to check. It checks
// no output and holds no reference: it measures, records, and reads back the red zones of
// the buffers the calls ran on.
//
// Device memory: the K pristine input sets as the parent sent them, then K + 1 buffer
// groups the timed calls run on, then the warm-up group (a copy of variant 0). Each group
// buffer sits in a red zone (red_zones.h): guards, or with the job's kPageEnd guards in
// even groups and page ends in odd ones.
#include <vector>

#include <fmt/format.h>

#include "dragon/harness/gpu_timer.h"
#include "runner_cuda_kernel.h"

namespace dragon::harness::kernel_runner {
namespace {

// One parameter's buffer in one group: its zone, and where the tensor lies in it.
struct GroupBuffer {
  DeviceZone zone;
  RedZone geometry;  // offsets relative to the zone's start
  runtime::DevicePtr data() const { return zone.zone() + geometry.data_offset; }
};

class TimingJob {
 public:
  TimingJob(const Job& job, unsigned char* region, const KernelLauncher& launcher)
      : job_(job),
        region_(region),
        launcher_(launcher),
        driver_(launcher.driver()),
        sets_(job.input_sets),
        variants_(job.variant_bases.size()),
        params_(job.arguments.size() / job.input_sets),
        pristine_(launcher.driver()) {}

  Status prepare() {
    // Pristine sets first, straight from the region.
    for (const ArgumentSlice& a : job_.arguments) {
      Expected<runtime::DevicePtr> p = pristine_.add(a.bytes);
      if (!p) return p.error();
      if (Status s = driver_->copy_to_device(p.value(), region_ + a.offset, a.bytes); !s) return s;
    }
    groups_.resize(sets_ + 2);
    for (size_t g = 0; g < groups_.size(); ++g) {
      const RedZones red_zones = job_.red_zones == RedZones::kPageEnd && g % 2 == 1 ? RedZones::kPageEnd
                                 : job_.red_zones == RedZones::kNone                ? RedZones::kNone
                                                                                    : RedZones::kGuards;
      for (size_t p = 0; p < params_; ++p) {
        Expected<GroupBuffer> buffer = make_buffer(job_.arguments[p].bytes, red_zones);
        if (!buffer) return buffer.error();
        groups_[g].push_back(std::move(buffer.value()));
      }
    }
    if (Status s = load_group(warmup_group(), 0); !s) return s;
    return load_group(timed_buffer_group(0, sets_), timed_variant(0, variants_));
  }

  Expected<GpuTiming> run() {
    TimedCall call = [this](int i) -> Status {
      return launch(groups_[i < 0 ? warmup_group() : timed_buffer_group(static_cast<uint64_t>(i), sets_)]);
    };
    TimedCall after_call = [this](int i) -> Status { return record_and_reload(i); };
    return time_gpu(call, job_.timer, after_call);
  }

  // After the last call: which guard bytes of which buffers changed.
  Expected<std::string> red_zone_violations() const {
    std::string text;
    for (size_t g = 0; g < groups_.size(); ++g) {
      for (size_t p = 0; p < params_; ++p) {
        const GroupBuffer& b = groups_[g][p];
        const uint64_t before = b.geometry.data_offset;
        const uint64_t after = b.geometry.zone_bytes - before - b.geometry.data_bytes;
        if (before + after == 0) continue;
        // The guard bytes alone, read back: [before][after] around an empty tensor.
        std::vector<unsigned char> guards(before + after);
        if (before > 0) {
          if (Status s = driver_->copy_to_host(guards.data(), b.zone.zone(), before); !s) return s.error();
        }
        if (after > 0) {
          if (Status s = driver_->copy_to_host(guards.data() + before, b.data() + b.geometry.data_bytes, after);
              !s) {
            return s.error();
          }
        }
        std::string found = harness::red_zone_violations(
            guards.data(), {RedZone{0, before + after, before, 0}},
            {fmt::format("parameter {} in buffer group {}{}", p, g, g == warmup_group() ? " (warm-up)" : "")});
        if (!found.empty()) text += (text.empty() ? "" : "; ") + found;
      }
    }
    return text;
  }

 private:
  size_t warmup_group() const { return sets_ + 1; }

  runtime::DevicePtr pristine(size_t set, size_t param) const { return pristine_.ptrs[set * params_ + param]; }

  // A buffer of `bytes` in a zone laid out as a run's would be, its guard bytes filled.
  Expected<GroupBuffer> make_buffer(uint64_t bytes, RedZones red_zones) const {
    RedZone geometry = layout_slices({bytes}, red_zones).red_zone_list().at(0);
    Expected<DeviceZone> zone = DeviceZone::allocate(driver_, geometry.zone_bytes, red_zones);
    if (!zone) return zone.error();
    GroupBuffer buffer{std::move(zone.value()), geometry};
    const uint64_t end = geometry.data_offset + geometry.data_bytes;
    if (geometry.data_offset > 0) {
      if (Status s = driver_->fill_bytes(buffer.zone.zone(), kGuardByte, geometry.data_offset); !s) {
        return s.error();
      }
    }
    if (geometry.zone_bytes > end) {
      if (Status s = driver_->fill_bytes(buffer.zone.zone() + end, kGuardByte, geometry.zone_bytes - end);
          !s) {
        return s.error();
      }
    }
    return buffer;
  }

  Status launch(const std::vector<GroupBuffer>& group) const {
    std::vector<runtime::DevicePtr> pointers;
    pointers.reserve(group.size());
    for (const GroupBuffer& b : group) pointers.push_back(b.data());
    return launcher_.launch(pointers);
  }

  // Every parameter of `group` back to variant `variant` as the parent sent it: its base
  // set copied (inputs restored, outputs to the parent's pre-fill), then its patches.
  // Ordered on the default stream before the next call's timed window opens, so not timed.
  Status load_group(size_t group, uint64_t variant) {
    const size_t base = job_.variant_bases[variant];
    for (size_t p = 0; p < params_; ++p) {
      if (Status s =
              driver_->copy_on_device(groups_[group][p].data(), pristine(base, p), job_.arguments[p].bytes);
          !s) {
        return s;
      }
    }
    for (const ElementPatch& patch : job_.patches) {
      if (patch.variant != variant) continue;
      if (Status s =
              driver_->copy_to_device(groups_[group][patch.param].data() + patch.byte_offset, &patch.bits, patch.bytes);
          !s) {
        return s;
      }
    }
    return {};
  }

  // After timed call `call` (outside its window; the timer has synchronised the device):
  // its recorded parameters into its call slots, then the next call's group reloaded.
  Status record_and_reload(int call) {
    const auto c = static_cast<uint64_t>(call);
    if (call < 0 || c >= static_cast<uint64_t>(job_.timer.max_calls)) {
      return DRAGON_RUNTIME_FAILURE("time_gpu", "a timed call past the job's call slots", "");
    }
    const std::vector<GroupBuffer>& group = groups_[timed_buffer_group(c, sets_)];
    const size_t recorded = job_.recorded_params.size();
    for (size_t r = 0; r < recorded; ++r) {
      const ArgumentSlice& slot = job_.call_slots[c * recorded + r];
      if (Status s =
              driver_->copy_to_host(region_ + slot.offset, group[job_.recorded_params[r]].data(), slot.bytes);
          !s) {
        return s;
      }
    }
    if (c + 1 < static_cast<uint64_t>(job_.timer.max_calls)) {
      return load_group(timed_buffer_group(c + 1, sets_), timed_variant(c + 1, variants_));
    }
    return {};
  }

  const Job& job_;
  unsigned char* region_;
  const KernelLauncher& launcher_;
  runtime::CudaDriver* driver_;
  const size_t sets_;
  const uint64_t variants_;
  const size_t params_;
  DeviceBuffers pristine_;                         // the pristine sets
  std::vector<std::vector<GroupBuffer>> groups_;  // K + 1 rotating groups, then the warm-up group
};

}  // namespace

Expected<TimingJobResult> run_timing_job(const Job& job, unsigned char* region,
                                                  const KernelLauncher& launcher) {
  // decode_job refused inconsistent jobs; this guards a job built in this process.
  if (std::string problem = job_problem(job); !problem.empty()) {
    return DRAGON_RUNTIME_FAILURE("timing job", problem, "");
  }
  TimingJob timing_job(job, region, launcher);
  if (Status s = timing_job.prepare(); !s) return s.error();
  Expected<GpuTiming> timing = timing_job.run();
  if (!timing) return timing.error();
  Expected<std::string> violations = timing_job.red_zone_violations();
  if (!violations) return violations.error();
  return TimingJobResult{std::move(timing.value().samples_ms), std::move(violations.value())};
}

Reply time_cuda_job(const Job& job, unsigned char* region) {
  Expected<JobKernel> kernel = JobKernel::load(job);
  if (!kernel) return cuda_failure_reply(job, kernel.error());
  Expected<TimingJobResult> result = run_timing_job(job, region, kernel.value());
  if (!result) return cuda_failure_reply(job, result.error());
  Reply reply = success_reply(job);
  reply.samples_ms = std::move(result.value().samples_ms);
  reply.red_zone_violations = std::move(result.value().red_zone_violations);
  reply.gpu_state = read_gpu_state();
  return reply;
}

}  // namespace dragon::harness::kernel_runner
