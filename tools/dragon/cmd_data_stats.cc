// SCAFFOLD (replaced before this lands).
#include "cmd_data.h"
#include "dragon/support/error.h"

namespace dragon::cli {

Command add_data_stats_subcommand(CLI::App& data) {
  data.add_subcommand("stats", "(scaffold)");
  return []() -> int { throw UserError("dragon data stats: not built yet"); };
}

}  // namespace dragon::cli
