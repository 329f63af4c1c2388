// dragon show (being written)
#include "commands.h"

namespace dragon::cli {

Command add_show_command(CLI::App& app) {
  app.add_subcommand("show", "(being written)");
  return [] { return 0; };
}

}  // namespace dragon::cli
