// Helpers of the codegen tests (codegen_test_util.h).
#include "codegen_test_util.h"

#include "dragon/interp/tensor_compare.h"
#include "dragon/ops/op_registry.h"

namespace dragon::codegen::testing {

std::vector<std::string> default_op_specs() {
  std::vector<std::string> specs;
  for (const ops::OpKind& kind : ops::OpRegistry::global().kinds()) {
    specs.push_back(ops::OpRegistry::global().make_workload(kind.name).spec);
  }
  return specs;
}

runtime::CompileCache& test_cache() {
  static runtime::CompileCache cache(std::string(DRAGON_BINARY_DIR) + "/codegen-test-cache");
  return cache;
}

double codegen_tolerance(ir::DataType dtype) {
  if (dtype.is_int() || dtype.is_bool()) return 0;
  if (dtype == ir::DataType::f64()) return 1e-12;
  if (dtype == ir::DataType::f32()) return 1e-5;
  return interp::reordering_tolerance(dtype);
}

::testing::AssertionResult outputs_match(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& reference,
                                         const std::vector<tensor::HostTensor>& actual, double tolerance_scale) {
  std::string report;
  for (size_t i = 0; i < func->params.size(); ++i) {
    if (func->params[i].role == ir::ParamRole::kInput) continue;
    double tolerance = codegen_tolerance(reference[i].dtype()) * tolerance_scale;
    interp::TensorComparison c = interp::compare_tensors(reference[i], actual[i], tolerance);
    if (!c.ok) report += "\n  " + func->params[i].buffer->name + ": " + interp::describe(c, reference[i], actual[i]);
  }
  if (report.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << func->name << " differs from the interpreter:" << report;
}

}  // namespace dragon::codegen::testing
