// Advantages, policy batches, the clipped-ratio loss and the GRPO step (rl/grpo.h).
#include "grpo.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dragon/support/error.h"

namespace dragon::model {

std::vector<std::optional<double>> group_advantages(std::span<const double> rewards, int64_t group_size,
                                                    bool scale_by_std) {
  DRAGON_CHECK(group_size > 0 && rewards.size() % static_cast<size_t>(group_size) == 0,
               "{} rewards are not groups of {}", rewards.size(), group_size);
  std::vector<std::optional<double>> out(rewards.size());
  for (size_t begin = 0; begin < rewards.size(); begin += static_cast<size_t>(group_size)) {
    std::span<const double> group = rewards.subspan(begin, static_cast<size_t>(group_size));
    double mean = 0;
    for (double r : group) mean += r;
    mean /= static_cast<double>(group_size);
    double variance = 0;
    for (double r : group) variance += (r - mean) * (r - mean);
    variance /= static_cast<double>(group_size);
    // Equal rewards (exactly: a cached measurement repeats its reward bit for bit) give
    // every sample advantage 0; dropping them keeps them out of the token average too.
    const bool all_equal = std::all_of(group.begin(), group.end(), [&](double r) { return r == group[0]; });
    if (all_equal) continue;
    const double scale = scale_by_std ? std::sqrt(variance) : 1.0;
    for (size_t i = 0; i < group.size(); ++i) out[begin + i] = (group[i] - mean) / scale;
  }
  return out;
}

PolicyBatch make_policy_batch(std::span<const Rollout> rollouts, int64_t vocab, script::TokenId pad,
                              torch::Device device) {
  DRAGON_CHECK(!rollouts.empty(), "an empty policy batch");
  int64_t T = 0;
  for (const Rollout& r : rollouts) {
    DRAGON_CHECK(!r.prompt.empty() && !r.policy.actions.empty(), "a rollout without a prompt or an action");
    DRAGON_CHECK(r.policy.log_probs.size() == r.policy.actions.size() && r.policy.allowed.size() == r.policy.actions.size(),
                 "a policy record whose actions, log-probs and allowed ids differ in length");
    T = std::max<int64_t>(T, static_cast<int64_t>(r.prompt.size() + r.policy.actions.size()) - 1);
  }
  const int64_t B = static_cast<int64_t>(rollouts.size());
  PolicyBatch batch;
  torch::Tensor inputs = torch::full({B, T}, static_cast<int64_t>(pad), torch::kInt64);
  torch::Tensor actions = torch::zeros({B, T}, torch::kInt64);
  torch::Tensor mask = torch::zeros({B, T}, torch::kBool);
  // Everything allowed where there is no action: a row of all -inf would make the
  // log-softmax NaN, and a NaN times a zero mask is still NaN in the gradient.
  torch::Tensor allowed = torch::ones({B, T, vocab}, torch::kBool);
  torch::Tensor old = torch::zeros({B, T}, torch::kFloat32);
  torch::Tensor advantages = torch::zeros({B}, torch::kFloat32);
  auto in = inputs.accessor<int64_t, 2>();
  auto ac = actions.accessor<int64_t, 2>();
  auto ma = mask.accessor<bool, 2>();
  auto al = allowed.accessor<bool, 3>();
  auto ol = old.accessor<float, 2>();
  auto ad = advantages.accessor<float, 1>();
  for (int64_t b = 0; b < B; ++b) {
    const Rollout& r = rollouts[b];
    std::vector<script::TokenId> sequence = r.prompt;
    sequence.insert(sequence.end(), r.policy.actions.begin(), r.policy.actions.end());
    for (int64_t i = 0; i + 1 < static_cast<int64_t>(sequence.size()); ++i) in[b][i] = sequence[i];
    const int64_t first = static_cast<int64_t>(r.prompt.size()) - 1;
    for (size_t t = 0; t < r.policy.actions.size(); ++t) {
      const int64_t i = first + static_cast<int64_t>(t);
      const script::TokenId action = r.policy.actions[t];
      DRAGON_CHECK(action >= 0 && action < vocab, "action {} outside the vocabulary of {}", action, vocab);
      ac[b][i] = action;
      ma[b][i] = true;
      ol[b][i] = static_cast<float>(r.policy.log_probs[t]);
      const std::vector<script::TokenId>& ids = r.policy.allowed[t];
      if (!ids.empty()) {
        for (int64_t v = 0; v < vocab; ++v) al[b][i][v] = false;
        for (script::TokenId id : ids) al[b][i][id] = true;
        DRAGON_CHECK(al[b][i][action], "action {} was not among the allowed ids", action);
      }
      ++batch.action_count;
    }
    ad[b] = static_cast<float>(r.advantage);
  }
  batch.inputs = inputs.to(device);
  batch.actions = actions.to(device);
  batch.action_mask = mask.to(device);
  batch.allowed = allowed.to(device);
  batch.old_log_probs = old.to(device);
  batch.advantages = advantages.to(device);
  return batch;
}

torch::Tensor action_log_probs(const torch::Tensor& logits, const PolicyBatch& batch, double temperature) {
  torch::Tensor scaled = (logits / temperature).masked_fill(batch.allowed.logical_not(),
                                                            -std::numeric_limits<float>::infinity());  // (B, T, V)
  torch::Tensor log_probs = torch::log_softmax(scaled, -1);                                         // (B, T, V)
  return log_probs.gather(-1, batch.actions.unsqueeze(-1)).squeeze(-1);                              // (B, T)
}

GrpoLoss grpo_loss(const torch::Tensor& logits, const PolicyBatch& batch, const GrpoSettings& settings,
                   const torch::Tensor& reference_log_probs) {
  torch::Tensor mask = batch.action_mask.to(torch::kFloat32);                // (B, T)
  torch::Tensor log_probs = action_log_probs(logits, batch, settings.temperature);  // (B, T)
  // Outside the sampled tokens the difference is zeroed before exp, so padding's values
  // never matter (and never overflow).
  torch::Tensor ratio = torch::exp((log_probs - batch.old_log_probs) * mask);  // (B, T)
  torch::Tensor advantage = batch.advantages.unsqueeze(1);                      // (B, 1)
  torch::Tensor unclipped = ratio * advantage;
  torch::Tensor clipped = ratio.clamp(1.0 - settings.clip_low, 1.0 + settings.clip_high) * advantage;
  torch::Tensor per_token = -torch::min(unclipped, clipped);  // (B, T)
  GrpoLoss out;
  torch::Tensor kl;
  if (reference_log_probs.defined()) {
    // k3 (Schulman): exp(ref - logp) - (ref - logp) - 1, unbiased for KL(policy || ref)
    // under the policy's samples and never negative.
    torch::Tensor delta = (reference_log_probs - log_probs) * mask;
    kl = torch::exp(delta) - delta - 1.0;
    per_token = per_token + settings.kl_coef * kl;
  }
  const double tokens = std::max<double>(1.0, static_cast<double>(batch.action_count));
  out.loss = (per_token * mask).sum() / tokens;
  {
    torch::NoGradGuard no_grad;
    out.clipped_fraction = (clipped.lt(unclipped).to(torch::kFloat32) * mask).sum().item<double>() / tokens;
    out.mean_ratio = (ratio * mask).sum().item<double>() / tokens;
    if (kl.defined()) out.kl = (kl * mask).sum().item<double>() / tokens;
  }
  return out;
}

GrpoStepResult grpo_step(Transformer& model, AdamW& optimizer, const PolicyBatch& batch, const GrpoSettings& settings,
                         Transformer* reference, double lr, double grad_clip) {
  torch::Tensor reference_log_probs;
  if (reference != nullptr && settings.kl_coef != 0) {
    torch::NoGradGuard no_grad;
    reference_log_probs = action_log_probs((*reference)->forward(batch.inputs), batch, settings.temperature);
  }
  optimizer.zero_grad();
  GrpoLoss loss = grpo_loss(model->forward(batch.inputs), batch, settings, reference_log_probs);
  loss.loss.backward();
  std::vector<torch::Tensor> params;
  for (const AdamW::ParamState& s : optimizer.state()) params.push_back(s.param);
  GrpoStepResult result;
  result.loss = loss.loss.item<double>();
  const double max_norm = grad_clip > 0 ? grad_clip : std::numeric_limits<double>::infinity();
  result.grad_norm = torch::nn::utils::clip_grad_norm_(params, max_norm);
  optimizer.step(lr);
  result.clipped_fraction = loss.clipped_fraction;
  result.mean_ratio = loss.mean_ratio;
  result.kl = loss.kl;
  return result;
}

}  // namespace dragon::model
