// The reference outputs and their calibrated tolerances.
#include "dragon/harness/reference.h"

#include "dragon/harness/f64_promotion.h"
#include "dragon/harness/output_comparison.h"
#include "dragon/harness/tolerance.h"
#include "dragon/interp/interpreter.h"
#include "dragon/lower/lower.h"

namespace dragon::harness {
namespace {

std::vector<size_t> written_params(const ir::PrimFunc& func) {
  std::vector<size_t> indices;
  for (size_t i = 0; i < func->params.size(); ++i) {
    if (func->params[i].role != ir::ParamRole::kInput) indices.push_back(i);
  }
  return indices;
}

// The arguments converted to the f64 twin's types (exact: f64 holds every narrower float).
std::vector<tensor::HostTensor> promoted_arguments(const ir::PrimFunc& twin,
                                                   const std::vector<tensor::HostTensor>& args) {
  std::vector<tensor::HostTensor> promoted;
  promoted.reserve(args.size());
  for (size_t p = 0; p < args.size(); ++p) {
    const tensor::HostTensor& arg = args[p];
    tensor::HostTensor t = tensor::HostTensor::like(twin->params[p].buffer);
    if (t.dtype() == arg.dtype()) {
      t = arg;
    } else {
      for (int64_t i = 0; i < arg.num_elements(); ++i) t.set(i, arg.get(i));
    }
    promoted.push_back(std::move(t));
  }
  return promoted;
}

using Runner = std::function<void(std::vector<tensor::HostTensor>&)>;

Runner interpreter_runner(const ir::PrimFunc& func) {
  auto compiled = std::make_shared<interp::CompiledFunction>(interp::CompiledFunction::compile(func));
  return [compiled](std::vector<tensor::HostTensor>& args) { compiled->run(args); };
}

Runner executable_runner(std::shared_ptr<runtime::Executable> executable) {
  return [executable](std::vector<tensor::HostTensor>& args) { executable->run(args).check(); };
}

}  // namespace

Reference::Reference(ir::PrimFunc func, const ReferenceOptions& options)
    : func_(std::move(func)), exact_func_(promote_floats_to_f64(func_)), output_params_(written_params(func_)) {
  if (options.engine == ReferenceEngine::kInterpreter) {
    native_ = interpreter_runner(func_);
    exact_ = interpreter_runner(exact_func_);
    return;
  }
  std::vector<ir::PrimFunc> flats = {lower::lower(func_, lower::Target::cpu()).func,
                                     lower::lower(exact_func_, lower::Target::cpu()).func};
  auto built = runtime::build_cpu_batch(flats, options.build);
  for (auto& executable : built) {
    if (!executable) throw RuntimeError(executable.error());
  }
  native_ = executable_runner(std::move(built[0].value()));
  exact_ = executable_runner(std::move(built[1].value()));
}

std::vector<ReferenceOutput> Reference::compute(const std::vector<tensor::HostTensor>& args) const {
  std::vector<tensor::HostTensor> native_args = args;
  native_(native_args);
  std::vector<tensor::HostTensor> exact_args = promoted_arguments(exact_func_, args);
  exact_(exact_args);

  std::vector<ReferenceOutput> outputs;
  for (size_t p : output_params_) {
    ReferenceOutput out;
    out.param_index = p;
    out.name = func_->params[p].buffer->name;
    out.native = std::move(native_args[p]);
    ir::DataType dtype = out.native.dtype();
    if (dtype.is_float()) {
      out.exact = std::move(exact_args[p]);
      out.reference_error = normalized_difference(out.native, out.exact);
    } else {
      out.exact = out.native;
    }
    out.tolerance = calibrated_tolerance(dtype, out.reference_error);
    outputs.push_back(std::move(out));
  }
  return outputs;
}

std::vector<ReferenceOutput> Reference::compute_native(const std::vector<tensor::HostTensor>& args) const {
  std::vector<tensor::HostTensor> native_args = args;
  native_(native_args);
  std::vector<ReferenceOutput> outputs;
  for (size_t p : output_params_) {
    ReferenceOutput out;
    out.param_index = p;
    out.name = func_->params[p].buffer->name;
    out.native = std::move(native_args[p]);
    out.exact = out.native;
    out.tolerance = tolerance_floor(out.native.dtype());
    outputs.push_back(std::move(out));
  }
  return outputs;
}

}  // namespace dragon::harness
