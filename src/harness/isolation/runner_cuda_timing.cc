// The runner's CUDA timing job (runner_jobs.h, JobKind::kTimeCuda): the kernel timed by the
// harness's one GPU timer (time_gpu) over the job's rotated input sets, each timed call's
// recorded parameters copied into that call's slot of the region for the parent to check.
// This process checks nothing and holds no reference: it only measures and records.
//
// Device memory: the K pristine input sets as the parent sent them, then K + 1 buffer
// groups the timed calls run on, then the warm-up group (a copy of set 0).
#include <vector>

#include "dragon/harness/gpu_timer.h"
#include "runner_cuda_kernel.h"

namespace dragon::harness::kernel_runner {
namespace {

class TimingJob {
 public:
  TimingJob(const Job& job, unsigned char* region, const JobKernel& kernel)
      : job_(job),
        region_(region),
        kernel_(kernel),
        driver_(kernel.driver()),
        sets_(job.input_sets),
        params_(job.arguments.size() / job.input_sets),
        buffers_(kernel.driver()) {}

  Status prepare() {
    // Pristine sets first, straight from the region.
    for (const ArgumentSlice& a : job_.arguments) {
      Expected<runtime::DevicePtr> p = buffers_.add(a.bytes);
      if (!p) return p.error();
      if (Status s = driver_->copy_to_device(p.value(), region_ + a.offset, a.bytes); !s) return s;
    }
    groups_.resize(sets_ + 2);
    for (std::vector<runtime::DevicePtr>& group : groups_) {
      for (size_t p = 0; p < params_; ++p) {
        Expected<runtime::DevicePtr> ptr = buffers_.add(job_.arguments[p].bytes);
        if (!ptr) return ptr.error();
        group.push_back(ptr.value());
      }
    }
    if (Status s = load_group(warmup_group(), 0); !s) return s;
    return load_group(timed_buffer_group(0, sets_), timed_input_set(0, sets_));
  }

  Expected<GpuTiming> run() {
    TimedCall call = [this](int i) -> Status {
      return kernel_.launch(groups_[i < 0 ? warmup_group() : timed_buffer_group(i, sets_)]);
    };
    TimedCall after_call = [this](int i) -> Status { return record_and_reload(i); };
    return time_gpu(call, job_.timer, after_call);
  }

 private:
  size_t warmup_group() const { return sets_ + 1; }

  runtime::DevicePtr pristine(size_t set, size_t param) const { return buffers_.ptrs[set * params_ + param]; }

  // Every parameter of `group` back to `set` as the parent sent it: inputs restored, outputs
  // to the parent's pre-fill. Ordered on the default stream before the next call's timed
  // window opens, so not timed.
  Status load_group(size_t group, size_t set) {
    for (size_t p = 0; p < params_; ++p) {
      if (Status s = driver_->copy_on_device(groups_[group][p], pristine(set, p), job_.arguments[p].bytes);
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
    const std::vector<runtime::DevicePtr>& group = groups_[timed_buffer_group(c, sets_)];
    const size_t recorded = job_.recorded_params.size();
    for (size_t r = 0; r < recorded; ++r) {
      const ArgumentSlice& slot = job_.call_slots[c * recorded + r];
      if (Status s = driver_->copy_to_host(region_ + slot.offset, group[job_.recorded_params[r]], slot.bytes);
          !s) {
        return s;
      }
    }
    if (c + 1 < static_cast<uint64_t>(job_.timer.max_calls)) {
      return load_group(timed_buffer_group(c + 1, sets_), timed_input_set(c + 1, sets_));
    }
    return {};
  }

  const Job& job_;
  unsigned char* region_;
  const JobKernel& kernel_;
  runtime::CudaDriver* driver_;
  const size_t sets_;
  const size_t params_;
  DeviceBuffers buffers_;                               // the pristine sets, then the groups' buffers
  std::vector<std::vector<runtime::DevicePtr>> groups_;  // K + 1 rotating groups, then the warm-up group
};

}  // namespace

Reply time_cuda_job(const Job& job, unsigned char* region) {
  // decode_job refused inconsistent jobs; this guards a job built in this process.
  if (std::string problem = timing_job_problem(job); !problem.empty()) {
    return failure_reply(job, DRAGON_RUNTIME_FAILURE("timing job", problem, ""));
  }
  Expected<JobKernel> kernel = JobKernel::load(job);
  if (!kernel) return cuda_failure_reply(job, kernel.error());
  TimingJob timing_job(job, region, kernel.value());
  if (Status s = timing_job.prepare(); !s) return cuda_failure_reply(job, s.error());
  Expected<GpuTiming> timing = timing_job.run();
  if (!timing) return cuda_failure_reply(job, timing.error());
  Reply reply = success_reply(job);
  reply.samples_ms = std::move(timing.value().samples_ms);
  reply.gpu_state = read_gpu_state();
  return reply;
}

}  // namespace dragon::harness::kernel_runner
