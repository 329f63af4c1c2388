// Writing a script with the model: one token at a time from the logits of the last
// position, greedy at temperature 0, otherwise temperature and nucleus (top-p) sampling,
// restricted to what a TokenConstraint allows. Not the constraint (token_constraint.h).
// A libtorch header: src/model and its tests only.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dragon/model/token_constraint.h"
#include "transformer.h"

namespace dragon::model {

struct SamplingSettings {
  double temperature = 1.0;  // 0: greedy (argmax, ties to the lowest id)
  double top_p = 1.0;        // keep the most likely tokens whose mass first reaches top_p
  int64_t max_new_tokens = 512;
  uint64_t seed = 0;
};

// The nucleus of `probs` (a distribution over ids 0..n-1): the ids, most likely first (ties
// by id), of the shortest prefix whose mass reaches `top_p` (at least one id).
std::vector<script::TokenId> nucleus(std::span<const float> probs, double top_p);

// One token from `logits` (V, float32 on any device): only ids in `allowed` (sorted; empty
// means all), scaled by 1/temperature, cut to the nucleus, drawn with `rng`. With
// `log_prob`, also the natural log of the drawn token's probability under the distribution
// it was drawn from (the nucleus renormalised; 0 for greedy, which is deterministic).
script::TokenId sample_token(const torch::Tensor& logits, const SamplingSettings& settings, std::mt19937_64& rng,
                             std::span<const script::TokenId> allowed, double* log_prob = nullptr);

// What reinforcement learning needs of a generation: every action the policy took (each
// generated token, then the EOS when it stopped there), its log-probability when drawn,
// and the ids the constraint allowed at that step (empty: all), so that the trainer can
// recompute the same distribution (rl/grpo.h).
struct PolicyRecord {
  std::vector<script::TokenId> actions;
  std::vector<double> log_probs;
  std::vector<std::vector<script::TokenId>> allowed;
};

struct Generation {
  std::vector<script::TokenId> tokens;  // generated, without the EOS
  enum class Stop : uint8_t { kEos, kMaxTokens, kContextFull, kNothingAllowed } stop = Stop::kEos;
  double seconds = 0;  // wall time from the start of generation until this one stopped
  double constraint_seconds = 0;  // of which asking its constraint (allowed tokens, may_end)
  int64_t ends_refused = 0;       // EOS drawn and refused by the constraint's may_end
};
std::string_view stop_name(Generation::Stop stop);

// The max_new_tokens of a request whose `max_new_tokens` of 0 means "until the context is
// full" (propose and RL): the model's context, which no continuation can pass.
inline int64_t new_token_limit(int64_t max_new_tokens, const ModelConfig& config) {
  return max_new_tokens > 0 ? max_new_tokens : config.context;
}

// Continues `prompt` (ending with <|script|>) until EOS or a limit. With a constraint,
// each token is drawn among the ones it allows. The prompt is read once, then each step
// reads only the token drawn last (a key/value cache, transformer.h).
// With `record`, the actions, their log-probabilities and allowed ids are appended to it.
Generation generate(Transformer& model, std::span<const script::TokenId> prompt, script::TokenId eos,
                    const SamplingSettings& settings, TokenConstraint* constraint, PolicyRecord* record = nullptr);

// Several continuations of one prompt side by side: continuation i is what `generate` makes
// with settings[i], constraints[i] and records[i] (each span empty, or one entry per
// continuation; a constraint's decoder follows one prefix, so each continuation needs its
// own). The prompt is read once for all; each step then reads the last token of every
// continuation still going as one batch, and a continuation that stops leaves the batch.
// The same seeds give the same tokens as one at a time, up to the rounding of batched
// arithmetic.
std::vector<Generation> generate_side_by_side(Transformer& model, std::span<const script::TokenId> prompt,
                                              script::TokenId eos, std::span<const SamplingSettings> settings,
                                              std::span<TokenConstraint* const> constraints,
                                              std::span<PolicyRecord* const> records = {});

}  // namespace dragon::model
