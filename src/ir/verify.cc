// (being written: the IR verifier)
#include "dragon/ir/verify.h"

#include "dragon/support/env.h"
#include "dragon/support/error.h"

namespace dragon::ir {

std::vector<std::string> find_ir_problems(const PrimFunc& func) { return {}; }

void check_well_formed(const PrimFunc& func, std::string_view context) {
  std::vector<std::string> problems = find_ir_problems(func);
  if (problems.empty()) return;
  std::string message = fmt::format("ill-formed IR {}:", context);
  for (const std::string& p : problems) message += "\n  " + p;
  throw InternalError(message);
}

bool ir_checks_enabled() {
#ifdef NDEBUG
  return env_verify_ir().value_or(false);
#else
  return env_verify_ir().value_or(true);
#endif
}

}  // namespace dragon::ir
