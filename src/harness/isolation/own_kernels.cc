// Our own compiled kernels in this process (own_kernels.h): an Executable as it is; a
// loaded CUDA function on device zones laid out as a runner's would be; its timing as a
// TimingRun whose job this process carries out with the runner's own timing code.
#include "dragon/harness/own_kernels.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "dragon/harness/kernel_runner_protocol.h"
#include "runner_cuda_kernel.h"
#include "timing_run.h"

namespace dragon::harness {
namespace {

RunOutcome driver_outcome(const RuntimeFailure& failure) {
  return RunOutcome::failure(kernel_runner::is_device_fault(failure) ? RunStatus::kCrashed : RunStatus::kFailed,
                             failure.describe());
}

class ExecutableCandidate final : public Candidate {
 public:
  ExecutableCandidate(std::shared_ptr<const runtime::Executable> executable, std::string name)
      : executable_(std::move(executable)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  RunOutcome run(std::vector<tensor::HostTensor>& args) override {
    Status status = executable_->run(args);
    if (!status.ok()) return driver_outcome(status.error());
    return RunOutcome::success();
  }

 private:
  std::shared_ptr<const runtime::Executable> executable_;
  std::string name_;
};

class CudaFunctionCandidate final : public Candidate {
 public:
  CudaFunctionCandidate(std::shared_ptr<const runtime::LoadedCudaFunction> function, std::string name,
                        DeviceRunOptions options)
      : function_(std::move(function)), name_(std::move(name)), options_(options) {}
  std::string name() const override { return name_; }

  RunOutcome run(std::vector<tensor::HostTensor>& args) override {
    Expected<runtime::CudaDriver*> got = runtime::CudaDriver::get();
    if (!got) return RunOutcome::failure(RunStatus::kFailed, got.error().describe());
    runtime::CudaDriver* driver = got.value();
    const RedZones red_zones = !options_.red_zones                                ? RedZones::kNone
                               : options_.fault_on_overrun && runs_++ % 2 == 1 ? RedZones::kPageEnd
                                                                                  : RedZones::kGuards;
    // A region like a runner's, in host memory: the tensors in their zones, guards filled.
    const kernel_runner::ArgumentLayout layout = kernel_runner::layout_arguments(args, red_zones);
    std::vector<unsigned char> region(layout.total_bytes);
    fill_red_zones(region.data(), layout.red_zone_list());
    for (size_t i = 0; i < args.size(); ++i) {
      std::memcpy(region.data() + layout.slices[i].offset, args[i].data(), layout.slices[i].bytes);
    }
    std::vector<DeviceZone> zones;
    std::vector<runtime::DevicePtr> pointers;
    for (size_t i = 0; i < args.size(); ++i) {
      const kernel_runner::ArgumentSlice& zone = layout.zones[i];
      Expected<DeviceZone> z = DeviceZone::allocate(driver, zone.bytes, red_zones);
      if (!z) return driver_outcome(z.error());
      if (Status s = driver->copy_to_device(z.value().zone(), region.data() + zone.offset, zone.bytes); !s) {
        return driver_outcome(s.error());
      }
      pointers.push_back(z.value().zone() + (layout.slices[i].offset - zone.offset));
      zones.push_back(std::move(z.value()));
    }
    // The function's workspaces are allocated once per load: runs take turns.
    std::lock_guard<std::mutex> lock(run_mutex_);
    if (Status s = function_->launch(pointers); !s) return driver_outcome(s.error());
    if (Status s = driver->synchronize(); !s) return driver_outcome(s.error());
    for (size_t i = 0; i < args.size(); ++i) {
      const kernel_runner::ArgumentSlice& zone = layout.zones[i];
      if (Status s = driver->copy_to_host(region.data() + zone.offset, zones[i].zone(), zone.bytes); !s) {
        return driver_outcome(s.error());
      }
    }
    std::vector<std::string> names;
    for (size_t i = 0; i < args.size(); ++i) names.push_back("argument " + std::to_string(i));
    if (std::string violations = red_zone_violations(region.data(), layout.red_zone_list(), names);
        !violations.empty()) {
      return RunOutcome::failure(RunStatus::kWroteOutOfBounds, violations);
    }
    for (size_t i = 0; i < args.size(); ++i) {
      std::memcpy(args[i].data(), region.data() + layout.slices[i].offset, layout.slices[i].bytes);
    }
    return RunOutcome::success();
  }

 private:
  std::shared_ptr<const runtime::LoadedCudaFunction> function_;
  std::string name_;
  DeviceRunOptions options_;
  std::atomic<uint64_t> runs_{0};
  std::mutex run_mutex_;
};

// The loaded function as the timing job's launcher.
class FunctionLauncher final : public kernel_runner::KernelLauncher {
 public:
  FunctionLauncher(const runtime::LoadedCudaFunction& function, runtime::CudaDriver* driver)
      : function_(function), driver_(driver) {}
  runtime::CudaDriver* driver() const override { return driver_; }
  Status launch(std::vector<runtime::DevicePtr>& pointers) const override {
    return function_.launch(pointers);
  }

 private:
  const runtime::LoadedCudaFunction& function_;
  runtime::CudaDriver* driver_;
};

}  // namespace

std::unique_ptr<Candidate> make_executable_candidate(std::shared_ptr<const runtime::Executable> executable,
                                                     std::string name) {
  return std::make_unique<ExecutableCandidate>(std::move(executable), std::move(name));
}

std::unique_ptr<Candidate> make_cuda_function_candidate(std::shared_ptr<const runtime::LoadedCudaFunction> function,
                                                        std::string name, DeviceRunOptions options) {
  return std::make_unique<CudaFunctionCandidate>(std::move(function), std::move(name), options);
}

IsolatedTiming time_cuda_function(std::shared_ptr<const runtime::LoadedCudaFunction> function,
                                  const Reference& reference, const TimingRequest& request, TimingInputs* inputs) {
  const std::string name = reference.func()->name + " (compiled)";
  isolation::check_timing_request(request, name);
  isolation::TimingRun run(reference, request, inputs, name);
  return run.run([&](kernel_runner::Job& job, isolation::SharedArguments& region) {
    isolation::TimingExecution execution;
    Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();
    if (!driver) {
      execution.outcome = RunOutcome::failure(RunStatus::kFailed, driver.error().describe());
      return execution;
    }
    FunctionLauncher launcher(*function, driver.value());
    Expected<kernel_runner::TimingJobResult> result =
        kernel_runner::run_timing_job(job, region.data(), launcher);
    if (!result) {
      execution.outcome = driver_outcome(result.error());
      return execution;
    }
    execution.outcome = RunOutcome::success();
    execution.samples_ms = std::move(result.value().samples_ms);
    execution.red_zone_violations = std::move(result.value().red_zone_violations);
    execution.gpu_state = read_gpu_state();
    return execution;
  });
}

}  // namespace dragon::harness
