#include "problem_buffers.h"

#include "dragon/interp/input_generator.h"

namespace dragon::bench {

void or_fail(const Status& s, const std::string& what) {
  if (!s.ok()) throw StepFailure(what + ": " + s.error().describe());
}

int64_t element_bytes(ir::DataType dtype) { return std::max(1, dtype.bits() / 8); }

namespace {
int64_t num_elements(const ir::Buffer& buffer) {
  int64_t n = 1;
  for (int64_t extent : buffer->shape) n *= extent;
  return n;
}
}  // namespace

ProblemBuffers::ProblemBuffers(runtime::CudaDriver* driver, const ops::Workload& workload)
    : driver_(driver), workload_(workload) {
  const auto& params = workload.func->params;
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Param& param = params[i];
    ir::DataType dtype = param.buffer->dtype;
    int64_t elements = num_elements(param.buffer);
    runtime::DevicePtr ptr = allocate(elements * element_bytes(dtype), "parameter " + param.buffer->name);
    ptrs_.push_back(ptr);
    if (param.role == ir::ParamRole::kInput) {
      inputs_.push_back(EagerTensor{reinterpret_cast<void*>(ptr), dtype, param.buffer->shape});
    } else {
      outputs_.push_back(OutputSlot{i, dtype, param.buffer->shape, elements, param.buffer->name});
    }
  }
  for (OutputSlot& slot : outputs_) slot.reference = allocate(slot.elements * 8, "the f64 reference of " + slot.name);
}

ProblemBuffers::~ProblemBuffers() {
  for (runtime::DevicePtr p : owned_) driver_->release(p);
}

runtime::DevicePtr ProblemBuffers::allocate(int64_t bytes, const std::string& what) {
  owned_.push_back(
      or_fail(driver_->allocate(static_cast<size_t>(std::max<int64_t>(bytes, 1))), "allocating " + what));
  return owned_.back();
}

void ProblemBuffers::fill_inputs(DeviceFiller& filler, InputDistribution distribution, uint64_t seed) {
  const auto& params = workload_.func->params;
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Param& param = params[i];
    if (param.role != ir::ParamRole::kInput) continue;
    if (DeviceFiller::draws(param.domain, param.buffer->dtype)) {
      filler.fill_domain(ptrs_[i], param.buffer, param.domain,
                         distribution == InputDistribution::kRand ? DeviceFiller::Distribution::kUniform01
                                                                  : DeviceFiller::Distribution::kNormal,
                         seed + i);
    } else {
      // Bag offsets (bags + 1 values from a serial walk), types without a device kernel,
      // and domains the generator rejects, which it reports with the parameter's name.
      tensor::HostTensor host = interp::make_argument(
          workload_.func, i, seed,
          distribution == InputDistribution::kRand ? interp::Distribution::kRand : interp::Distribution::kNormal);
      or_fail(driver_->copy_to_device(ptrs_[i], host.data(), static_cast<size_t>(host.size_bytes())),
              "copying input " + param.buffer->name);
    }
  }
}

void ProblemBuffers::compute_eager_reference(const EagerBaselines& eager,
                                             const std::map<std::string, std::string>& values) {
  std::unique_ptr<EagerComputation> twin =
      eager.bind(workload_.op->name, values, inputs_, EagerDevice::kCuda, /*promote_to_f64=*/true);
  twin->run();
  for (size_t o = 0; o < outputs_.size(); ++o) {
    twin->write_output(
        o, EagerTensor{reinterpret_cast<void*>(outputs_[o].reference), ir::DataType::f64(), outputs_[o].shape});
  }
  twin->synchronize();
}

std::unique_ptr<EagerComputation> ProblemBuffers::run_eager(const EagerBaselines& eager,
                                                            const std::map<std::string, std::string>& values,
                                                            const std::vector<runtime::DevicePtr>& destinations,
                                                            const std::vector<ir::DataType>& dtypes) {
  std::unique_ptr<EagerComputation> computation =
      eager.bind(workload_.op->name, values, inputs_, EagerDevice::kCuda, /*promote_to_f64=*/false);
  computation->run();
  for (size_t o = 0; o < outputs_.size(); ++o) {
    computation->write_output(o, EagerTensor{reinterpret_cast<void*>(destinations[o]), dtypes[o], outputs_[o].shape});
  }
  computation->synchronize();
  return computation;
}
}  // namespace dragon::bench
