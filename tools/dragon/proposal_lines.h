// The model's attempts as JSON lines, how dragon-model's `propose --out FILE` hands them to
// `dragon optimize` (a child process, model_binary.h): one object per attempt,
//   {"attempt": 0, "script": "...", "stop": "eos", "tokens": 212, "seconds": 0.41}
#pragma once

#include <string>
#include <vector>

#include "dragon/model/propose.h"

namespace dragon::cli {

std::string proposal_line(const model::Proposal& proposal);
// Every line of `path`; UserError "PATH:LINE: why" for one that is not a proposal.
std::vector<model::Proposal> read_proposal_lines(const std::string& path);

}  // namespace dragon::cli
