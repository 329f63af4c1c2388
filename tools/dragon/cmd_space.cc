// dragon space: the design space of an op spec (or IR file) for a target: its sketches as
// compact scripts, with what shaped each and the role of each sampling instruction, then
// N candidates sampled from them (round robin), each with its script or why it failed.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "dragon/lower/target.h"
#include "dragon/script/script.h"
#include "dragon/search/design_space.h"
#include "dragon/search/postproc.h"
#include "dragon/search/rule_set.h"
#include "dragon/support/error.h"
#include "function_source.h"

namespace dragon::cli {
namespace {

struct SpaceOptions {
  FunctionSource source;
  std::string target = "cuda";
  std::string rules_file;
  int samples = 0;
  int64_t seed = 1;
  bool print_rules = false;
};

int show_space(const SpaceOptions& options) {
  const lower::Target target = *lower::Target::from_name(options.target);  // checked by the parser
  search::RuleSet rules = options.rules_file.empty() ? search::RuleSet::for_target(target)
                                                     : search::RuleSet::load(options.rules_file);
  if ((rules.target == lower::Target::Kind::kCuda) != target.is_gpu()) {
    throw UserError(fmt::format("--rules {}: a rule set for the other target", options.rules_file));
  }
  if (options.print_rules) {
    std::fputs(rules.to_json().c_str(), stdout);
    return 0;
  }
  std::string label;
  ir::PrimFunc func = options.source.load(&label);
  std::vector<search::Sketch> sketches = search::generate_design_space(func, target, rules, options.seed);
  std::printf("# %s on %s (rule set %s): %zu sketch%s\n", label.c_str(), target.to_string().c_str(),
              rules.name.c_str(), sketches.size(), sketches.size() == 1 ? "" : "es");
  for (size_t i = 0; i < sketches.size(); ++i) {
    const search::Sketch& sketch = sketches[i];
    std::printf("\n## sketch %zu: %s\n", i, sketch.applied.empty() ? "(no rule applied)"
                                                                      : fmt::format("{}", fmt::join(sketch.applied, ", ")).c_str());
    std::string sites;
    for (const search::SamplingSite& site : search::sampling_sites(sketch.trace)) {
      sites += fmt::format(" {}:{}", site.instruction, search::sampling_role_name(site.role));
    }
    std::printf("# sampling (instruction:role):%s\n", sites.empty() ? " none" : sites.c_str());
    std::fputs(script::encode(sketch.trace).c_str(), stdout);
  }
  int ok = 0;
  for (int n = 0; n < options.samples && !sketches.empty(); ++n) {
    size_t which = static_cast<size_t>(n) % sketches.size();
    int64_t seed = options.seed + n;
    search::CandidateResult result = search::sample_candidate(sketches[which], func, target, rules, seed);
    if (result.ok()) {
      ++ok;
      std::printf("\n## candidate %d (sketch %zu, seed %lld): ok\n", n, which, static_cast<long long>(seed));
      std::fputs(script::encode(result.candidate().trace).c_str(), stdout);
    } else {
      const search::CandidateFailure& f = result.failure();
      std::printf("\n## candidate %d (sketch %zu, seed %lld): %s in %s: %s\n", n, which, static_cast<long long>(seed),
                  std::string(search::failure_kind_name(f.kind)).c_str(), f.stage.c_str(), f.message.c_str());
    }
  }
  if (options.samples > 0) std::printf("\n# %d of %d candidates ok\n", ok, options.samples);
  return 0;
}

}  // namespace

Command add_space_command(CLI::App& app) {
  auto options = std::make_shared<SpaceOptions>();
  CLI::App* sub = app.add_subcommand(
      "space", "Print the design space of an op spec for a target: sketches as compact scripts, sampled candidates");
  options->source.add_options(sub);
  sub->add_option("--target", options->target, "cuda (an H200) or cpu")
      ->check(CLI::IsMember(lower::Target::names()))
      ->capture_default_str();
  sub->add_option("--samples", options->samples, "Sample this many candidates (round robin over the sketches)")
      ->capture_default_str();
  sub->add_option("--seed", options->seed, "Seed of the sketches' draws; candidate n uses seed + n")->capture_default_str();
  sub->add_option("--rules", options->rules_file, "A rule-set file (JSON, docs/design-space.md) instead of the built-in");
  sub->add_flag("--print-rules", options->print_rules, "Print the rule set in effect as JSON and stop");
  return [options] { return show_space(*options); };
}

}  // namespace dragon::cli
