// dragon show: print the canonical IR of an op spec, or parse, verify and reprint a file;
// with --script the scheduled function, with --lowered its lowered form (cmd_lower.h).
#include <cstdio>

#include "cmd_lower.h"
#include "commands.h"
#include "dragon/ir/printer.h"
#include "dragon/script/script_file.h"
#include "function_source.h"

namespace dragon::cli {

Command add_show_command(CLI::App& app) {
  auto source = std::make_shared<FunctionSource>();
  auto script = std::make_shared<std::string>();
  auto lower_flags = std::make_shared<LowerFlags>();
  CLI::App* sub = app.add_subcommand("show", "Print the canonical IR text of an op spec or an IR file");
  source->add_options(sub);
  sub->add_option("--script", *script, "Apply this schedule script first and show the scheduled function");
  add_lower_flags(sub, *lower_flags);
  return [source, script, lower_flags] {
    ir::PrimFunc func = source->load();
    if (!script->empty()) func = script::replay(func, script::load(*script)).func();
    if (lower_flags->requested()) return show_lowered(func, *lower_flags);
    std::fputs(ir::print_function(func).c_str(), stdout);
    return 0;
  };
}

}  // namespace dragon::cli
