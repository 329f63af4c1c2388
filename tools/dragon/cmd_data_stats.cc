// dragon data stats DIR [--rebuild-manifest]: prints a data set's manifest and checks every shard against it
// (data/dataset_check.h); a problem is a user error naming the shard and line. Argument
// parsing and printing only.
#include <cstdio>
#include <memory>
#include <string>

#include "cmd_data.h"
#include "dragon/data/dataset_check.h"
#include "dragon/data/manifest.h"

namespace dragon::cli {

Command add_data_stats_subcommand(CLI::App& data) {
  auto dir = std::make_shared<std::string>();
  CLI::App* sub = data.add_subcommand(
      "stats", "Print a data set's manifest and check every shard (scripts decode, hashes rebuild, counts match)");
  sub->add_option("dir", *dir, "The data set directory (dragon data build --out)")->required();
  auto rebuild = std::make_shared<bool>(false);
  // Shards built on several machines (each run writes its own manifest) are gathered by
  // copying their shard and summary files into one folder; this writes its manifest.
  sub->add_flag("--rebuild-manifest", *rebuild,
                "First write DIR/manifest.json from the shard summaries in DIR (shards gathered from several runs)");
  return [dir, rebuild]() -> int {
    if (*rebuild) data::rebuild_manifest(*dir);
    // The manifest first, so a reader sees what is claimed before what is checked.
    std::printf("%s", data::describe(data::read_manifest(*dir)).c_str());
    std::fflush(stdout);
    data::CheckReport report = data::check_dataset(*dir);
    std::printf("check: %lld shards, %lld examples, %lld scripts decoded and canonical, every hash rebuilt, "
                "counts and tokens match the manifest\n",
                static_cast<long long>(report.shards), static_cast<long long>(report.examples),
                static_cast<long long>(report.scripts));
    return 0;
  };
}

}  // namespace dragon::cli
