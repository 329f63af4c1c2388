// dragon show: print the canonical IR of an op spec, or parse, verify and reprint a file.
#include <cstdio>

#include "commands.h"
#include "dragon/ir/printer.h"
#include "function_source.h"

namespace dragon::cli {

Command add_show_command(CLI::App& app) {
  auto source = std::make_shared<FunctionSource>();
  CLI::App* sub = app.add_subcommand("show", "Print the canonical IR text of an op spec or an IR file");
  source->add_options(sub);
  return [source] {
    ir::PrimFunc func = source->load();
    std::fputs(ir::print_function(func).c_str(), stdout);
    return 0;
  };
}

}  // namespace dragon::cli
