// Helpers of the verification tests (harness_test_util.h).
#include "harness_test_util.h"

#include "dragon/interp/interpreter.h"
#include "dragon/ops/op_registry.h"

namespace dragon::harness::testing {

ir::PrimFunc op_function(const std::string& spec) { return ops::OpRegistry::global().make_workload(spec).func; }

std::unique_ptr<Candidate> interpreter_candidate(const ir::PrimFunc& func, std::string name) {
  auto compiled = std::make_shared<interp::CompiledFunction>(interp::CompiledFunction::compile(func));
  return make_function_candidate(std::move(name), [compiled](std::vector<tensor::HostTensor>& args) {
    compiled->run(args);
    return RunOutcome::success();
  });
}

std::unique_ptr<Candidate> executable_candidate(const runtime::Executable& executable, std::string name) {
  return make_function_candidate(std::move(name), [&executable](std::vector<tensor::HostTensor>& args) {
    Status status = executable.run(args);
    if (!status.ok()) return RunOutcome::failure(RunStatus::kFailed, status.error().describe());
    return RunOutcome::success();
  });
}

runtime::CompileCache& test_cache() {
  static runtime::CompileCache cache(std::string(DRAGON_BINARY_DIR) + "/harness-test-cache");
  return cache;
}

}  // namespace dragon::harness::testing
