// One step of group relative policy optimisation (GRPO, Shao et al. 2024, with DAPO's
// token-level loss and separate low/high clip): rewards of G samples of a prompt become
// advantages relative to their group; the policy's log-probabilities of the sampled
// tokens are recomputed under the same distribution they were drawn from (temperature,
// the constraint's allowed ids), and the clipped-ratio loss is averaged over every sampled
// token of the batch. Not the sampling (sampling.h) or the reward (rl/reward.h).
// A libtorch header: src/model and its tests only.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "../sampling.h"
#include "../training.h"

namespace dragon::model {

struct GrpoSettings {
  double clip_low = 0.2;    // ratios below 1 - clip_low stop pushing a token further down
  double clip_high = 0.28;  // ratios above 1 + clip_high stop pushing it further up (clip-higher)
  bool scale_by_std = false;  // divide advantages by the group's standard deviation
  double kl_coef = 0;         // weight of the KL estimate to the reference model (0: none)
  double temperature = 1.0;   // the sampling temperature: the policy is softmax(logits / T)
};

// Group-relative advantages of `rewards` in consecutive groups of `group_size`: reward
// minus the group's mean (divided by the group's population standard deviation when
// scale_by_std). A group whose rewards are all equal teaches nothing and is dropped: its
// samples get nullopt.
std::vector<std::optional<double>> group_advantages(std::span<const double> rewards, int64_t group_size,
                                                    bool scale_by_std);

// One sampled script as the trainer sees it.
struct Rollout {
  std::vector<script::TokenId> prompt;  // ends with <|script|>
  PolicyRecord policy;                  // the actions, their sampling log-probs, allowed ids
  double advantage = 0;
};

// Rollouts as tensors. Sequence b is its prompt then its actions; position i predicts
// token i + 1, so action t is predicted at position prompt.size() - 1 + t.
struct PolicyBatch {
  torch::Tensor inputs;         // (B, T) int64, padded
  torch::Tensor actions;        // (B, T) int64: the action predicted at each position, 0 elsewhere
  torch::Tensor action_mask;    // (B, T) bool: the positions of sampled tokens
  torch::Tensor allowed;        // (B, T, V) bool: the constraint's ids there (all true elsewhere)
  torch::Tensor old_log_probs;  // (B, T) float32: the sampler's log-probs (0 elsewhere)
  torch::Tensor advantages;     // (B) float32
  int64_t action_count = 0;
};
PolicyBatch make_policy_batch(std::span<const Rollout> rollouts, int64_t vocab, script::TokenId pad,
                              torch::Device device);

// log softmax(logits / T) over the allowed ids, at each position's action: (B, T, V) -> (B, T).
torch::Tensor action_log_probs(const torch::Tensor& logits, const PolicyBatch& batch, double temperature);

struct GrpoLoss {
  torch::Tensor loss;          // scalar: mean over sampled tokens of -min(r A, clip(r) A) + beta KL
  double clipped_fraction = 0; // sampled tokens whose clipped term was the smaller (no gradient)
  double mean_ratio = 0;
  double kl = 0;               // mean KL estimate (k3) to the reference, 0 without one
};
// The loss from the policy's logits (B, T, V) and, for the KL term, the reference model's
// action log-probs (B, T) (undefined tensor: no KL term).
GrpoLoss grpo_loss(const torch::Tensor& logits, const PolicyBatch& batch, const GrpoSettings& settings,
                   const torch::Tensor& reference_log_probs = {});

struct GrpoStepResult {
  double loss = 0, grad_norm = 0, clipped_fraction = 0, mean_ratio = 0, kl = 0;
};
// Forward, loss, backward, gradient clipping, one AdamW step; the reference model (may be
// null) is run without gradients for the KL term.
GrpoStepResult grpo_step(Transformer& model, AdamW& optimizer, const PolicyBatch& batch, const GrpoSettings& settings,
                         Transformer* reference, double lr, double grad_clip);

}  // namespace dragon::model
