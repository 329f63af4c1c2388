// Asking the little dragon for scripts: the workload's prompt (its canonical IR text, or
// its op spec), with an existing script for refinement, and K sampled attempts, each
// constrained by default to scripts that replay on the workload. What `dragon optimize`
// measures; measuring is not the model's job (search's measurers and the harness do it).
// libtorch-free header; without libtorch, propose() throws a UserError saying so.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dragon/model/script_constraint.h"
#include "dragon/model/sft_data.h"

namespace dragon::model {

struct ProposeRequest {
  std::string model_path;  // model.safetensors (bf16 weights) or a training checkpoint.safetensors
  std::string workload;    // op spec
  std::optional<std::string> existing_script;  // refinement: the script to improve
  // How the prompt is framed: nullopt takes the model's own (its files' metadata "prompt",
  // written by training; IR text when a file says nothing).
  std::optional<PromptForm> prompt;
  int attempts = 8;
  double temperature = 0.8;  // 0: greedy (every attempt the same)
  double top_p = 0.95;
  // 0: until the model's context is full. A fixed cap cuts long scripts short: a tiled
  // convolution's script is about 1,100 tokens, past the 1,024 this once was.
  int64_t max_new_tokens = 0;
  uint64_t seed = 0;         // attempt i samples with seed + i
  bool constrained = true;   // the constrained decoder on (every script replays)
  // With the constrained decoder: a script may end only where this check of the workload
  // it scheduled passes (`dragon optimize` and `evaluate` lower for CUDA here, so an
  // attempt that would stop at a kernel the GPU cannot run writes on instead).
  EndCheck end_check;
  int64_t write_on_tokens = kWriteOnTokens;  // after the first end it refused (script_constraint.h)
  // "cpu", "cuda" or "auto" (cuda when there is one). The CPU by default: a token at a time,
  // a model this small is bound by kernel launches on the GPU, and on an H100 host the CPU
  // (16 threads) sampled 8 attempts of 300 tokens in 1.1 s against the GPU's 11.4 s.
  std::string device = "cpu";
  int threads = 0;              // CPU threads for libtorch (0: its default)
};

struct Proposal {
  int attempt = 0;
  std::string script;   // the decoded text (complete or not: see stop)
  std::string stop;     // "eos", "max tokens", "context full", "no token allowed"
  int64_t tokens = 0;   // generated
  double seconds = 0;   // wall time from the start of sampling until this attempt stopped
  double constraint_seconds = 0;  // of which its constraint took (the rest: the model, shared)
  int64_t ends_refused = 0;       // ends the end check refused
  std::string last_refusal;       // why it refused the last one
};

// One Proposal per attempt, in order, sampled side by side (one batch through the model);
// `on_each` sees each in order once all are made.
// Throws UserError for an unreadable model file, an op spec that does not build or a
// prompt longer than the model's context.
std::vector<Proposal> propose(const ProposeRequest& request, const std::function<void(const Proposal&)>& on_each = {});

}  // namespace dragon::model
