// Formatting of internal check failures.
#include "dragon/support/error.h"

namespace dragon::detail {

void fail_check(const char* condition, const char* file, int line, const std::string& message) {
  std::string_view path(file);
  // Keep the path from the repository root so messages do not depend on the build machine.
  if (auto pos = path.rfind("/src/"); pos != std::string_view::npos) path.remove_prefix(pos + 1);
  if (auto pos = path.rfind("/include/"); pos != std::string_view::npos) path.remove_prefix(pos + 1);
  if (message.empty()) {
    throw InternalError(fmt::format("internal error at {}:{}: check failed: {}", path, line, condition));
  }
  throw InternalError(fmt::format("internal error at {}:{}: check failed: {}: {}", path, line, condition, message));
}

}  // namespace dragon::detail
