// dragon ops (being written)
#include "commands.h"

namespace dragon::cli {

Command add_ops_command(CLI::App& app) {
  app.add_subcommand("ops", "(being written)");
  return [] { return 0; };
}

}  // namespace dragon::cli
