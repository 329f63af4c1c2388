// The little dragon's attempts at one workload, on their way to a measurer: asked of
// dragon-model as a child process (model_binary.h), then each decoded and replayed on the
// workload. What `dragon optimize` and `dragon evaluate` share; they measure the attempts
// themselves (with the default schedule, or a reference script, in the same batch).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/model/propose.h"
#include "dragon/search/measure_result.h"

namespace dragon::cli {

struct ModelQuestion {
  std::string spec;
  std::string model_path;
  int attempts = 8;
  std::optional<std::string> refine_script;  // the script to improve (its text); none: construction
  double temperature = 0.8;
  double top_p = 0.95;
  uint64_t seed = 0;
  bool unconstrained = false;
  // The target the attempts are for ("cuda", or empty); with the constrained decoder an
  // attempt for cuda ends only where its script lowers for it, unless free_ends.
  std::string target;
  bool free_ends = false;
  std::string prompt;  // "ir" or "spec"; empty: the model's own form
  int threads = 0;     // CPU threads for libtorch; 0: its default
};

// The sampling flags `dragon optimize` and `dragon evaluate` share: --attempts,
// --temperature, --top-p, --seed, --unconstrained, --free-ends, --prompt, --threads.
void add_sampling_flags(CLI::App* command, ModelQuestion& question);

// The model's attempts, one per requested attempt, in order. UserError when dragon-model
// cannot be started or fails.
std::vector<model::Proposal> ask_model(const ModelQuestion& question);

// One attempt: the canonical script and the scheduled function, or why it never got that
// far (a result with status kApplyFailed: the script does not decode or does not replay).
struct Attempt {
  model::Proposal proposal;
  std::string script;  // canonical (re-encoded); empty when it does not decode
  std::optional<ir::PrimFunc> scheduled;
  std::optional<search::MeasureResult> result;
};
Attempt prepare_attempt(const model::Proposal& proposal, const ir::PrimFunc& func);

// The model the repository ships (data/model/model.safetensors), unless $DRAGON_MODEL names
// another.
std::string default_model_path();

}  // namespace dragon::cli
