// Regenerates tests/golden/codegen/: for each golden case, its script (NAME.json, a TVM
// JSON trace made by the case's schedule function) and its kernel (NAME.cc or NAME.cu).
// Run by hand after an intended codegen change, then review the diff (README.md there).
#include <cstdio>

#include "dragon/ops/op_registry.h"
#include "dragon/schedule/trace_json.h"
#include "dragon/support/file.h"
#include "golden_cases.h"

int main() {
  using namespace dragon;
  try {
    for (const codegen::testing::GoldenCase& c : codegen::testing::golden_cases()) {
      ops::Workload w = ops::OpRegistry::global().make_workload(c.spec);
      schedule::Schedule sch(w.func);
      c.make_script(sch);
      std::string script = schedule::trace_to_json(sch.trace());
      std::string stem = codegen::testing::golden_directory() + "/" + c.name;
      write_text_file(stem + ".json", script + "\n");
      write_text_file(stem + (c.cuda ? ".cu" : ".cc"), codegen::testing::golden_kernel(c, script + "\n"));
      std::printf("wrote %s%s\n", stem.c_str(), c.cuda ? ".cu" : ".cc");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "update_codegen_golden: %s\n", e.what());
    return 1;
  }
  return 0;
}
