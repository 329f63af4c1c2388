// dragon data corpus|build|stats: one parent command (cmd_data.cc), each subcommand in
// its own file. Each adds itself to `data` and returns what runs it once parsed.
#pragma once

#include "commands.h"

namespace dragon::cli {

Command add_data_corpus_subcommand(CLI::App& data);  // cmd_data_corpus.cc
Command add_data_build_subcommand(CLI::App& data);   // cmd_data_build.cc
Command add_data_stats_subcommand(CLI::App& data);   // cmd_data_stats.cc

}  // namespace dragon::cli
