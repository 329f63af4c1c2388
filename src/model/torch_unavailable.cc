// train_sft, train_rl and propose in a build without libtorch: a clear error instead of a missing
// command.
#include "dragon/model/propose.h"
#include "dragon/model/rl/train_rl.h"
#include "dragon/model/sft.h"
#include "dragon/support/error.h"

namespace dragon::model {

SftSummary train_sft(const SftSettings&, const std::function<void(const std::string&)>&) {
  throw UserError("train sft: this build has no libtorch (configure found none; on Debian install libtorch-dev "
                  "through scripts/setup.sh, elsewhere pass -DCMAKE_PREFIX_PATH to PyTorch's cmake prefix)");
}

std::vector<Proposal> propose(const ProposeRequest&, const std::function<void(const Proposal&)>&) {
  throw UserError("propose: this build has no libtorch (configure found none; on Debian install libtorch-dev "
                  "through scripts/setup.sh)");
}

}  // namespace dragon::model

namespace dragon::model {

RlSummary train_rl(const RlSettings&, Rewarder&, const std::function<void(const std::string&)>&) {
  throw UserError("train rl: this build has no libtorch (configure found none; on Debian install libtorch-dev "
                  "through scripts/setup.sh)");
}

}  // namespace dragon::model
