// SCAFFOLD (replaced before this lands).
#include "cmd_data.h"
#include "dragon/support/error.h"

namespace dragon::cli {

Command add_data_build_subcommand(CLI::App& data) {
  data.add_subcommand("build", "(scaffold)");
  return []() -> int { throw UserError("dragon data build: not built yet"); };
}

}  // namespace dragon::cli
