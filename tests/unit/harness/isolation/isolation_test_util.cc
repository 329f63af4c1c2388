// Helpers of the isolation tests (isolation_test_util.h).
#include "isolation_test_util.h"

#include <cmath>

namespace dragon::harness::testing {

std::string kernel_path(const std::string& file) {
  return std::string(DRAGON_SOURCE_DIR) + "/tests/unit/harness/isolation/kernels/" + file;
}

IsolationOptions test_options() {
  static runtime::CompileCache cache(std::string(DRAGON_BINARY_DIR) + "/isolation-test-cache");
  IsolationOptions options;
  options.runner_path = DRAGON_KERNEL_RUNNER_PATH;
  options.timeout = std::chrono::milliseconds(1000);
  options.cache = &cache;
  return options;
}

std::vector<tensor::HostTensor> relu_arguments() {
  tensor::HostTensor x(ir::DataType::f32(), {4, 256});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.set(i, (i % 2 == 0 ? 1.0 : -1.0) * static_cast<double>(i - 512) / 8);
  tensor::HostTensor y(ir::DataType::f32(), {4, 256});
  y.fill(std::nan(""));
  return {x, y};
}

}  // namespace dragon::harness::testing
