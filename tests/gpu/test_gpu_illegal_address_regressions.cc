// The five H200 tuning candidates that failed with CUDA_ERROR_ILLEGAL_ADDRESS
// (data/regressions/h200_illegal_address.jsonl: DLRM-Bench's embedding_bag at 2M rows and
// TBE, pooled computed at its consumer's threadIdx loop), replayed on their workloads on
// the device. Their intermediate gets one copy per thread, 3.5e9 and 4.0e9 elements, whose
// offsets wrapped in i32 before unify_thread_bindings widened them. Each must now run and
// match the unscheduled function run by the CPU backend (the interpreter would take minutes
// on TBE's 2.7e9 multiply-adds). The device needs 14-16 GiB free for the copies, and the
// host about 7 GiB for TBE's inputs. tests/unit/lower/gpu/test_global_intermediate_copies.cc
// checks the same lowering without a device.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dragon/interp/input_generator.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/build.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/support/file.h"
#include "interpreter_match.h"
#include "unit/codegen/codegen_test_util.h"

namespace dragon::codegen {
namespace {

struct FailedRecord {
  std::string spec;
  std::string script;
};

std::vector<FailedRecord> records() {
  const std::string path = std::string(DRAGON_SOURCE_DIR) + "/data/regressions/h200_illegal_address.jsonl";
  std::istringstream in(read_text_file(path));
  std::vector<FailedRecord> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    out.push_back({j.at("spec").get<std::string>(), j.at("script").get<std::string>()});
  }
  return out;
}

TEST(GpuIllegalAddressRegressions, TheFiveH200CandidatesRunAndMatchTheCpuBackend) {
  DRAGON_REQUIRE_GPU();
  std::vector<FailedRecord> all = records();
  ASSERT_EQ(all.size(), 5u);
  runtime::BuildOptions options;
  options.cache = &testing::test_cache();
  std::string reference_spec;  // records of one workload share its inputs and reference
  std::vector<tensor::HostTensor> inputs, reference;
  ir::PrimFunc original;
  for (size_t i = 0; i < all.size(); ++i) {
    const FailedRecord& r = all[i];
    SCOPED_TRACE("record " + std::to_string(i) + ": " + r.spec);
    if (r.spec != reference_spec) {
      original = ops::OpRegistry::global().make_workload(r.spec).func;
      inputs = interp::make_arguments(original, 11, interp::Distribution::kNormal);
      reference = inputs;
      auto cpu = runtime::build(original, lower::Target::cpu(), options);
      ASSERT_TRUE(cpu.ok()) << cpu.error().describe();
      Status ran = cpu.value()->run(reference);
      ASSERT_TRUE(ran.ok()) << ran.error().describe();
      reference_spec = r.spec;
    }
    ir::PrimFunc scheduled = schedule::replay(script::decode(r.script), original).func();
    auto exe = runtime::build(scheduled, lower::Target::cuda_h200(), options);
    ASSERT_TRUE(exe.ok()) << exe.error().describe();
    std::vector<tensor::HostTensor> args = inputs;
    Status status = exe.value()->run(args);
    ASSERT_TRUE(status.ok()) << status.error().describe();  // the illegal address showed here
    EXPECT_TRUE(testing::outputs_match(original, reference, args, kGpuToleranceScale));
  }
}

}  // namespace
}  // namespace dragon::codegen
