// What a results file records about how it was made: the command line, the commit and the
// start time (UTC). The commit is $DRAGON_COMMIT when set (the GPU machine gets a copy of
// the tree without .git), else `git rev-parse` in the source tree, else "unknown".
#pragma once

#include <string>

namespace dragon::cli {

struct RunProvenance {
  std::string command, commit, started_at;
};

RunProvenance current_provenance();

}  // namespace dragon::cli
