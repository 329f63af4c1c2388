// dragon show --lowered: runs the lowering pipeline on the shown function and prints the
// flat form, optionally every pass's output and the time each pass took.
#include "cmd_lower.h"

#include <cstdio>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/ir/printer.h"
#include "dragon/lower/lower.h"
#include "dragon/support/error.h"

namespace dragon::cli {

void add_lower_flags(CLI::App* sub, LowerFlags& flags) {
  sub->add_flag("--lowered", flags.lowered, "Print the function lowered to the flat form code generation reads");
  sub->add_option("--target", flags.target, "Lowering target: cpu or cuda (an H200, sm_90a)")->capture_default_str();
  sub->add_flag("--print-after-all", flags.print_after_all, "Print the IR after every pass (implies --lowered)");
  sub->add_flag("--time-passes", flags.time_passes, "Print the time of every pass on stderr (implies --lowered)");
}

int show_lowered(const ir::PrimFunc& func, const LowerFlags& flags) {
  const std::optional<lower::Target> named = lower::Target::from_name(flags.target);
  if (!named) {
    throw UserError(fmt::format("--target '{}': expected {}", flags.target, fmt::join(lower::Target::names(), " or ")));
  }
  const lower::Target& target = *named;
  lower::LowerOptions options;
  options.time_passes = flags.time_passes;
  if (flags.print_after_all) {
    options.after_pass = [](const std::string& pass, const ir::PrimFunc& after, bool changed) {
      if (!changed) {
        std::printf("// after %s (unchanged)\n", pass.c_str());
        return;
      }
      std::printf("// after %s\n%s", pass.c_str(), ir::print_function(after).c_str());
    };
  }
  lower::Lowered lowered = lower::lower(func, target, options);
  if (flags.print_after_all) std::printf("// lowered for %s\n", target.to_string().c_str());
  std::fputs(ir::print_function(lowered.func).c_str(), stdout);
  if (flags.time_passes) {
    double total_ms = 0;
    std::fprintf(stderr, "%-30s %10s  %s\n", "pass", "ms", "changed");
    for (const lower::PassTiming& t : lowered.timings) {
      double ms = static_cast<double>(t.elapsed.count()) / 1e6;
      total_ms += ms;
      std::fprintf(stderr, "%-30s %10.3f  %s\n", t.pass.c_str(), ms, t.changed ? "yes" : "no");
    }
    std::fprintf(stderr, "%-30s %10.3f\n", "total", total_ms);
  }
  return 0;
}

}  // namespace dragon::cli
