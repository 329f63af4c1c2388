// Where a subcommand's function comes from: an op spec or an IR text file (--ir).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "dragon/ir/function.h"

namespace dragon::cli {

struct FunctionSource {
  std::string spec;
  std::string ir_file;

  // Adds the SPEC positional and the --ir option to `sub`.
  void add_options(CLI::App* sub);
  // Builds the op or parses (and verifies) the file; throws UserError when neither or
  // both are given, or when either is bad. `label` receives the canonical spec or path.
  ir::PrimFunc load(std::string* label = nullptr) const;
};

}  // namespace dragon::cli
