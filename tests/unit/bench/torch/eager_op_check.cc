#include "unit/bench/torch/eager_op_check.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "dragon/interp/interpreter.h"
#include "dragon/interp/tensor_compare.h"
#include "dragon/ops/op_registry.h"
#include "eager_op_table.h"

namespace dragon::bench::testing {
namespace {

using torch_eager::EagerOpParams;

at::Tensor view(tensor::HostTensor& tensor) {
  return at::from_blob(tensor.data(), tensor.shape(),
                       at::TensorOptions().dtype(torch_eager::to_scalar_type(tensor.dtype())));
}

void check_run(std::string_view spec, const ops::Workload& workload, const ops::OpArgs& args,
               std::vector<tensor::HostTensor> arguments, const std::vector<tensor::HostTensor>& expected,
               const EagerCheckOptions& options, bool promote) {
  const torch_eager::EagerOpEntry* entry = torch_eager::eager_op_table().find(workload.op->name);
  ASSERT_NE(entry, nullptr) << spec << ": no eager baseline for " << workload.op->name;
  const auto& params = workload.func->params;
  std::vector<at::Tensor> inputs;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].role != ir::ParamRole::kInput) continue;
    at::Tensor t = view(arguments[i]);
    if (promote && at::isFloatingType(t.scalar_type())) t = t.to(at::kDouble);
    inputs.push_back(t);
  }
  std::vector<at::Tensor> outputs;
  try {
    outputs = entry->run(EagerOpParams(workload.op->name, ops::canonical_values(args)), inputs);
  } catch (const std::exception& e) {
    FAIL() << spec << (promote ? " (f64 twin)" : "") << ": " << entry->call << " threw: " << e.what();
  }
  size_t next_output = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].role == ir::ParamRole::kInput) continue;
    ASSERT_LT(next_output, outputs.size()) << spec << ": the eager op returned " << outputs.size() << " outputs";
    const tensor::HostTensor& reference = expected[i];
    at::Tensor out = outputs[next_output++].to(at::kCPU, torch_eager::to_scalar_type(reference.dtype())).contiguous();
    ASSERT_EQ(out.numel(), reference.num_elements())
        << spec << ": output " << params[i].buffer->name << " has " << out.numel() << " elements, ours "
        << reference.num_elements();
    tensor::HostTensor actual(reference.dtype(), reference.shape());
    std::memcpy(actual.data(), out.data_ptr(), static_cast<size_t>(actual.size_bytes()));
    double tolerance = options.tolerance_factor * interp::reordering_tolerance(reference.dtype());
    interp::TensorComparison comparison = interp::compare_tensors(reference, actual, tolerance);
    EXPECT_TRUE(comparison.ok) << spec << (promote ? " (f64 twin)" : "") << ", output " << params[i].buffer->name
                               << " (" << entry->call << "): " << interp::describe(comparison, reference, actual);
  }
  EXPECT_EQ(next_output, outputs.size()) << spec << ": the eager op returned more outputs than the function has";
}

}  // namespace

void expect_eager_matches_interpreter(std::string_view spec, const EagerCheckOptions& options) {
  const ops::OpRegistry& registry = ops::OpRegistry::global();
  ops::OpArgs args = registry.parse(spec);
  ops::Workload workload = registry.make_workload(spec);
  std::vector<tensor::HostTensor> arguments =
      interp::make_arguments(workload.func, options.seed, options.distribution);
  std::vector<tensor::HostTensor> expected = arguments;
  interp::run(workload.func, expected);
  check_run(spec, workload, args, arguments, expected, options, /*promote=*/false);
  if (options.check_f64_twin) check_run(spec, workload, args, arguments, expected, options, /*promote=*/true);
}

}  // namespace dragon::bench::testing
