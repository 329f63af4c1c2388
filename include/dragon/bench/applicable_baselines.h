// Which baselines a problem gets, decided from its op and shape alone (no GPU, no vendor
// library loaded): libtorch eager where the plugin's table has the op kind, cuBLAS for
// matmul-like problems, cuDNN where a convolution, pooling or softmax maps onto cuDNN
// calls. `dragon bench --list` prints them; a run adds one row per baseline that applies.
#pragma once

#include <optional>
#include <string>

#include "dragon/bench/eager_baselines.h"
#include "dragon/ops/op_registry.h"

namespace dragon::bench {

struct ApplicableBaselines {
  std::optional<bool> eager;  // nullopt: the eager plugin is not loaded here, so unknown
  std::string vendor;         // "cuBLAS", "cuDNN" or "" (none applies)
  std::string why_no_vendor;  // when vendor is empty: why neither applies

  // "eager, cuBLAS"; "eager"; "eager (no plugin here), cuDNN"; "none".
  std::string describe() const;
};

// `eager` is the loaded plugin, or null where there is none.
ApplicableBaselines applicable_baselines(const ops::Workload& workload, const EagerBaselines* eager);

}  // namespace dragon::bench
