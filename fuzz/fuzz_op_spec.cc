// Fuzzes the op-spec parser: any text either is rejected with a UserError or parses to
// arguments whose canonical spelling parses back to the same spelling and builds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace {

// Shapes are symbolic in the IR, but a few builders unroll small constant dimensions:
// keep specs whose digits could name huge sizes from timing out for that reason alone.
bool has_long_number(std::string_view text) {
  int run = 0;
  for (char c : text) {
    run = (c >= '0' && c <= '9') ? run + 1 : 0;
    if (run > 7) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view spec(reinterpret_cast<const char*>(data), size);
  const dragon::ops::OpRegistry& registry = dragon::ops::OpRegistry::global();
  dragon::ops::Workload workload;
  try {
    if (has_long_number(spec)) {
      registry.parse(spec);
      return 0;
    }
    workload = registry.make_workload(spec);
  } catch (const dragon::UserError&) {
    return 0;  // rejected with a message: the expected outcome for bad text
  }
  // Accepted: the canonical spelling must be a fixed point.
  dragon::ops::Workload again = registry.make_workload(workload.spec);
  if (again.spec != workload.spec) __builtin_trap();
  return 0;
}
