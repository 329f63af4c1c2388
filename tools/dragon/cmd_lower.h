// The lowering flags of `dragon show` (--lowered, --target, --print-after-all,
// --time-passes) and the printing they ask for. Argument handling only: the pipeline is
// dragon::lower::lower().
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "dragon/ir/function.h"

namespace dragon::cli {

struct LowerFlags {
  bool lowered = false;
  std::string target = "cpu";
  bool print_after_all = false;
  bool time_passes = false;
  // --print-after-all and --time-passes imply --lowered.
  bool requested() const { return lowered || print_after_all || time_passes; }
};

// Adds the flags to `sub`.
void add_lower_flags(CLI::App* sub, LowerFlags& flags);
// Lowers `func` for the flags' target and prints the result to stdout; with
// --print-after-all the IR after every pass first ("(unchanged)" instead of IR when a
// pass changed nothing), with --time-passes a table of pass times on stderr. Throws
// UserError for an unknown target.
int show_lowered(const ir::PrimFunc& func, const LowerFlags& flags);

}  // namespace dragon::cli
