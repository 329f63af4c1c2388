// train_sft in a build without libtorch: a clear error instead of a missing command.
#include "dragon/model/sft.h"
#include "dragon/support/error.h"

namespace dragon::model {

SftSummary train_sft(const SftSettings&, const std::function<void(const std::string&)>&) {
  throw UserError("train sft: this build has no libtorch (configure found none; on Debian install libtorch-dev "
                  "through scripts/setup.sh, elsewhere pass -DCMAKE_PREFIX_PATH to PyTorch's cmake prefix)");
}

}  // namespace dragon::model
