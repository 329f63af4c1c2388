// Finding and loading the libtorch eager-baseline plugin (libdragon_eager_torch.so):
// $DRAGON_EAGER_PLUGIN when set, else beside the running executable, else one folder up,
// else in ../lib from it. A missing or unloadable plugin is a reason, not an error: suites then run without
// the eager baselines and the results say why.
#pragma once

#include <string>

#include "dragon/bench/eager_baselines.h"

namespace dragon::bench {

struct EagerPlugin {
  const EagerBaselines* baselines = nullptr;  // null when not loaded; lives for the process
  std::string path;                           // what was loaded, or tried last
  std::string why_not;                        // when not loaded: every place tried and why
};

// Loads once per process; later calls return the first result.
const EagerPlugin& eager_plugin();

// Loads the plugin at `path` (no search, no caching; the library stays loaded once loaded).
EagerPlugin load_eager_plugin_from(const std::string& path);

}  // namespace dragon::bench
