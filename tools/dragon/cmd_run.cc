// dragon run (being written)
#include "commands.h"

namespace dragon::cli {

Command add_run_command(CLI::App& app) {
  app.add_subcommand("run", "(being written)");
  return [] { return 0; };
}

}  // namespace dragon::cli
