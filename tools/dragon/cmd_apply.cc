// dragon apply: print the IR of an op spec (or IR file) after applying a schedule script.
#include <cstdio>

#include "commands.h"
#include "dragon/ir/printer.h"
#include "dragon/script/script_file.h"
#include "function_source.h"

namespace dragon::cli {

Command add_apply_command(CLI::App& app) {
  auto source = std::make_shared<FunctionSource>();
  auto script = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("apply", "Apply a schedule script (compact script or TVM-layout JSON trace) and print the IR");
  source->add_options(sub);
  sub->add_option("script", *script, "The script file (a compact script or a trace in TVM's JSON layout)")->required();
  return [source, script] {
    ir::PrimFunc scheduled = script::replay(source->load(), script::load(*script)).func();
    std::fputs(ir::print_function(scheduled).c_str(), stdout);
    return 0;
  };
}

}  // namespace dragon::cli
