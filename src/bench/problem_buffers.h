// Device buffers of one problem at full shape, as `dragon bench` and `dragon audit` use
// them: every parameter allocated, inputs drawn (on the device within their value domains;
// bag offsets on the host), one f64 buffer per output for a reference, all released together.
// Internal to dragon_bench.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dragon/bench/device_comparison.h"
#include "dragon/bench/device_filler.h"
#include "dragon/bench/eager_baselines.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::bench {

// A step of one problem that failed: the caller records it and goes on.
struct StepFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T or_fail(Expected<T> e, const std::string& what) {
  if (!e.ok()) throw StepFailure(what + ": " + e.error().describe());
  return std::move(e.value());
}
void or_fail(const Status& s, const std::string& what);

int64_t element_bytes(ir::DataType dtype);

struct OutputSlot {
  size_t param;  // index among the function's parameters
  ir::DataType dtype;
  std::vector<int64_t> shape;
  int64_t elements;
  std::string name;
  runtime::DevicePtr reference = 0;  // f64
};

// How float inputs with a real or positive domain are drawn.
enum class InputDistribution : uint8_t { kRand, kNormal };  // torch.rand's U[0, 1); N(0, 1)

class ProblemBuffers {
 public:
  // Allocates every parameter and an f64 reference per output; throws StepFailure.
  ProblemBuffers(runtime::CudaDriver* driver, const ops::Workload& workload);
  ~ProblemBuffers();
  ProblemBuffers(const ProblemBuffers&) = delete;
  ProblemBuffers& operator=(const ProblemBuffers&) = delete;

  // Draws every input again: parameter i from seed + i on the device where DeviceFiller
  // draws its domain and type, else from interp's generator on the host (the same seed).
  void fill_inputs(DeviceFiller& filler, InputDistribution distribution, uint64_t seed);

  // Another device buffer released with the rest.
  runtime::DevicePtr allocate(int64_t bytes, const std::string& what);

  const std::vector<runtime::DevicePtr>& params() const { return ptrs_; }
  const std::vector<EagerTensor>& eager_inputs() const { return inputs_; }
  const std::vector<OutputSlot>& outputs() const { return outputs_; }

  // The outputs' f64 reference from libtorch eager in f64 (the op's eager computation on
  // f64 copies of the inputs); throws what the plugin throws.
  void compute_eager_reference(const EagerBaselines& eager, const std::map<std::string, std::string>& values);
  // The eager computation in the op's own types; its outputs written to `destinations`
  // (one per output, of the output's dtype or f64). Returns the computation for timing.
  std::unique_ptr<EagerComputation> run_eager(const EagerBaselines& eager,
                                              const std::map<std::string, std::string>& values,
                                              const std::vector<runtime::DevicePtr>& destinations,
                                              const std::vector<ir::DataType>& dtypes);

 private:
  runtime::CudaDriver* driver_;
  const ops::Workload& workload_;
  std::vector<runtime::DevicePtr> owned_;
  std::vector<runtime::DevicePtr> ptrs_;
  std::vector<EagerTensor> inputs_;
  std::vector<OutputSlot> outputs_;
};

}  // namespace dragon::bench
