// SCAFFOLD (replaced before this lands).
#include "cmd_data.h"
#include "dragon/support/error.h"

namespace dragon::cli {

Command add_data_corpus_subcommand(CLI::App& data) {
  data.add_subcommand("corpus", "(scaffold)");
  return []() -> int { throw UserError("dragon data corpus: not built yet"); };
}

}  // namespace dragon::cli
