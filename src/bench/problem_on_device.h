// One problem on the device, ready to judge kernels: its buffers with inputs drawn, the f64
// reference of its outputs (libtorch eager in f64, else our f64 twin under the default
// schedule), and libtorch eager's own error per output, which calibrates the tolerance.
// What `dragon bench` runs every contender against and what GPU tuning verifies every
// candidate with. Internal to dragon_bench; timing is the callers'.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dragon/bench/device_comparison.h"
#include "dragon/bench/device_filler.h"
#include "dragon/bench/eager_baselines.h"
#include "dragon/bench/suite_run.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/cuda_function.h"
#include "problem_buffers.h"

namespace dragon::bench {

// The untuned GPU schedule of `func` (suite_run.cc): what our f64 twin runs under.
ir::PrimFunc default_gpu_schedule(const ir::PrimFunc& func);

// A scheduled function compiled for the H200 and loaded; throws StepFailure.
std::unique_ptr<runtime::LoadedCudaFunction> build_kernels(const ir::PrimFunc& scheduled);

struct DeviceServices {
  runtime::CudaDriver* driver = nullptr;
  DeviceFiller* filler = nullptr;
  DeviceComparer* comparer = nullptr;
  const EagerBaselines* eager = nullptr;  // null without the plugin (or without CUDA in it)
};

class ProblemOnDevice {
 public:
  // Allocates every parameter and draws the inputs (torch.rand's U[0, 1), as KernelBench
  // feeds) from `seed`. Throws StepFailure.
  ProblemOnDevice(const DeviceServices& services, const ops::Workload& workload, uint64_t seed);

  // Computes the f64 reference; returns how ("libtorch eager in f64", "our f64 twin
  // (default schedule)", with why eager failed when it did). Throws StepFailure.
  std::string compute_reference();
  // Runs libtorch eager in the op's own types into scratch outputs, checks them against
  // the reference (their errors become the tolerance's calibration) and returns the
  // computation (for timing) with the checks. Throws StepFailure (no eager baseline).
  struct Eager {
    std::unique_ptr<EagerComputation> computation;
    std::vector<OutputCheck> checks;
    double first_call_seconds = 0;
  };
  Eager run_eager();
  bool has_eager() const;

  // The output checks of a run whose results are in `results` (one device buffer per
  // output, each of the output's dtype), with the eager-calibrated tolerance when eager ran.
  std::vector<OutputCheck> check_outputs(const std::vector<runtime::DevicePtr>& results) const;
  static bool all_ok(const std::vector<OutputCheck>& checks);
  // "out: error ... above the tolerance ...; " for the failing checks.
  static std::string describe_failures(const std::vector<OutputCheck>& checks);
  // One scratch device buffer per output (released with the problem).
  std::vector<runtime::DevicePtr> scratch_outputs(const std::string& who);
  // Every output parameter's bytes set to `byte` (0xff: NaN for floats, so unwritten
  // elements show).
  void prefill_outputs(unsigned char byte);

  const ops::Workload& workload() const { return workload_; }
  const std::map<std::string, std::string>& values() const { return values_; }
  const std::vector<runtime::DevicePtr>& params() const { return buffers_->params(); }
  const std::vector<OutputSlot>& outputs() const { return buffers_->outputs(); }
  ProblemBuffers& buffers() { return *buffers_; }
  const DeviceServices& services() const { return services_; }

 private:
  DeviceServices services_;
  ops::Workload workload_;
  std::map<std::string, std::string> values_;
  std::unique_ptr<ProblemBuffers> buffers_;
  std::vector<double> eager_errors_;  // per output: libtorch's own error against f64
};

}  // namespace dragon::bench
