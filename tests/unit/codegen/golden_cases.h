// The fixed (workload, script) pairs whose generated kernels are kept byte for byte in
// tests/golden/codegen/ (CONVENTIONS.md: a refactor that claims no behaviour change must
// leave them identical). Each case's script is made here once, by update_codegen_golden,
// and stored next to its kernel as a TVM-layout JSON trace; the test replays the stored
// script, so the kernels depend only on the files and on codegen.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/schedule/schedule.h"

namespace dragon::codegen::testing {

struct GoldenCase {
  std::string name;    // file stem: NAME.json (script) and NAME.cc or NAME.cu (kernel)
  std::string spec;    // op spec
  bool cuda = false;   // target: cuda_h200, else cpu
  // Schedules the unscheduled function (only the update tool calls it).
  std::function<void(schedule::Schedule&)> make_script;
};

const std::vector<GoldenCase>& golden_cases();
std::string golden_directory();  // DRAGON_SOURCE_DIR/tests/golden/codegen
// The kernel source of a case with the stored script applied.
std::string golden_kernel(const GoldenCase& c, const std::string& script_json);

}  // namespace dragon::codegen::testing
