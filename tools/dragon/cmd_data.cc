// dragon data: the training set's workload corpus, its builder and its checker
// (docs/data-set.md). A dispatcher only; each subcommand is its own file.
#include <utility>
#include <vector>

#include "cmd_data.h"

namespace dragon::cli {

Command add_data_command(CLI::App& app) {
  CLI::App* data = app.add_subcommand("data", "Workload corpus and search-derived training examples");
  data->require_subcommand(1);
  std::vector<std::pair<CLI::App*, Command>> subcommands;
  auto add = [&](Command (*make)(CLI::App&)) {
    const size_t before = data->get_subcommands({}).size();
    Command run = make(*data);
    subcommands.emplace_back(data->get_subcommands({})[before], std::move(run));
  };
  add(add_data_corpus_subcommand);
  add(add_data_build_subcommand);
  add(add_data_stats_subcommand);
  return [subcommands = std::move(subcommands)]() {
    for (const auto& [sub, run] : subcommands) {
      if (sub->parsed()) return run();
    }
    return 1;  // unreachable: require_subcommand(1)
  };
}

}  // namespace dragon::cli
