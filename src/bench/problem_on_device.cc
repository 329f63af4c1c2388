#include "problem_on_device.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "dragon/harness/f64_promotion.h"
#include "dragon/harness/tolerance.h"
#include "dragon/lower/target.h"
#include "dragon/runtime/compile.h"

namespace dragon::bench {

using runtime::DevicePtr;

std::unique_ptr<runtime::LoadedCudaFunction> build_kernels(const ir::PrimFunc& scheduled) {
  runtime::Compiled compiled = or_fail(runtime::compile(scheduled, lower::Target::cuda_h200()), "NVRTC");
  return or_fail(runtime::LoadedCudaFunction::load(std::move(compiled.cuda())), "loading the kernels");
}

ProblemOnDevice::ProblemOnDevice(const DeviceServices& services, const ops::Workload& workload, uint64_t seed)
    : services_(services),
      workload_(workload),
      values_(ops::canonical_values(ops::OpRegistry::global().parse(workload.spec))) {
  buffers_ = std::make_unique<ProblemBuffers>(services_.driver, workload_);
  buffers_->fill_inputs(*services_.filler, InputDistribution::kRand, seed);
}

bool ProblemOnDevice::has_eager() const {
  return services_.eager != nullptr && !services_.eager->call(workload_.op->name).empty();
}

std::string ProblemOnDevice::compute_reference() {
  std::string how;
  if (has_eager()) {
    try {
      buffers_->compute_eager_reference(*services_.eager, values_);
      return "libtorch eager in f64";
    } catch (const std::exception& e) {
      how = std::string("libtorch eager in f64 failed (") + e.what() + "); ";
    }
  }
  // Our own f64 twin under the default schedule: independent of the schedule under test,
  // not of our op definitions (the libtorch tests cover those).
  ir::PrimFunc twin = harness::promote_floats_to_f64(workload_.func);
  std::unique_ptr<runtime::LoadedCudaFunction> kernels = build_kernels(default_gpu_schedule(twin));
  std::vector<DevicePtr> twin_ptrs = params();
  const auto& params = workload_.func->params;
  for (size_t i = 0; i < params.size(); ++i) {
    ir::DataType dtype = params[i].buffer->dtype;
    if (params[i].role != ir::ParamRole::kInput || !dtype.is_float() || dtype == ir::DataType::f64()) continue;
    int64_t elements = 1;
    for (int64_t extent : params[i].buffer->shape) elements *= extent;
    twin_ptrs[i] = buffers_->allocate(elements * 8, "the f64 copy of " + params[i].buffer->name);
    services_.comparer->widen(this->params()[i], dtype, twin_ptrs[i], elements);
  }
  // Float outputs become f64 in the twin and land in the reference directly; the others
  // (indices) keep their type and are widened afterwards.
  std::vector<std::pair<const OutputSlot*, DevicePtr>> widen_later;
  for (const OutputSlot& slot : outputs()) {
    if (slot.dtype.is_float()) {
      twin_ptrs[slot.param] = slot.reference;
    } else {
      twin_ptrs[slot.param] = buffers_->allocate(slot.elements * element_bytes(slot.dtype), "the twin's " + slot.name);
      widen_later.emplace_back(&slot, twin_ptrs[slot.param]);
    }
  }
  or_fail(kernels->launch(twin_ptrs), "the f64 twin");
  for (const auto& [slot, ptr] : widen_later) services_.comparer->widen(ptr, slot->dtype, slot->reference, slot->elements);
  or_fail(services_.driver->synchronize(), "the f64 twin");
  return how + "our f64 twin (default schedule)";
}

std::vector<OutputCheck> ProblemOnDevice::check_outputs(const std::vector<DevicePtr>& results) const {
  std::vector<OutputCheck> checks;
  for (size_t o = 0; o < outputs().size(); ++o) {
    const OutputSlot& slot = outputs()[o];
    DeviceComparison c = services_.comparer->compare(results[o], slot.dtype, slot.reference, slot.elements);
    OutputCheck check;
    check.output = slot.name;
    check.normalized_error = c.normalized_error();
    check.tolerance = eager_errors_.empty() ? harness::tolerance_floor(slot.dtype)
                                            : harness::calibrated_tolerance(slot.dtype, eager_errors_[o]);
    check.ok = c.nonfinite_mismatches == 0 && check.normalized_error <= check.tolerance;
    check.detail = c.describe();
    checks.push_back(check);
  }
  return checks;
}

bool ProblemOnDevice::all_ok(const std::vector<OutputCheck>& checks) {
  for (const OutputCheck& c : checks) {
    if (!c.ok) return false;
  }
  return true;
}

std::string ProblemOnDevice::describe_failures(const std::vector<OutputCheck>& checks) {
  std::string text;
  for (const OutputCheck& check : checks) {
    if (!check.ok) text += fmt::format("{}: error {} above the tolerance {:.3g}; ", check.output, check.detail, check.tolerance);
  }
  return text;
}

std::vector<DevicePtr> ProblemOnDevice::scratch_outputs(const std::string& who) {
  std::vector<DevicePtr> buffers;
  for (const OutputSlot& slot : outputs()) {
    buffers.push_back(buffers_->allocate(slot.elements * element_bytes(slot.dtype), who + "'s " + slot.name));
  }
  return buffers;
}

void ProblemOnDevice::prefill_outputs(unsigned char byte) {
  for (const OutputSlot& slot : outputs()) {
    or_fail(services_.driver->fill_bytes(params()[slot.param], byte,
                                         static_cast<size_t>(slot.elements * element_bytes(slot.dtype))),
            "pre-filling outputs");
  }
}

ProblemOnDevice::Eager ProblemOnDevice::run_eager() {
  if (!has_eager()) throw StepFailure("no eager baseline for this op kind");
  Eager eager;
  std::vector<DevicePtr> results = scratch_outputs("torch");
  std::vector<ir::DataType> dtypes;
  for (const OutputSlot& slot : outputs()) dtypes.push_back(slot.dtype);
  auto start = std::chrono::steady_clock::now();
  eager.computation = buffers_->run_eager(*services_.eager, values_, results, dtypes);
  eager.first_call_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  eager_errors_.clear();
  eager.checks = check_outputs(results);
  for (const OutputCheck& check : eager.checks) eager_errors_.push_back(check.normalized_error);
  // The eager result is the computation our tolerance is calibrated on: its own error is
  // reported, not judged (an f64 twin of the same calls agrees with it by construction).
  for (OutputCheck& check : eager.checks) check.ok = std::isfinite(check.normalized_error);
  return eager;
}

}  // namespace dragon::bench
