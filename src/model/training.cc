// Batches, the masked SFT loss, AdamW and the training step (training.h).
#include "training.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "dragon/support/error.h"

namespace dragon::model {

Batch make_batch(std::span<const TokenizedExample* const> examples, script::TokenId pad, torch::Device device) {
  DRAGON_CHECK(!examples.empty(), "an empty batch");
  int64_t T = 0;
  for (const TokenizedExample* e : examples) T = std::max<int64_t>(T, static_cast<int64_t>(e->tokens.size()) - 1);
  const int64_t B = static_cast<int64_t>(examples.size());
  torch::Tensor inputs = torch::full({B, T}, static_cast<int64_t>(pad), torch::kInt64);   // (B, T)
  torch::Tensor targets = torch::full({B, T}, kIgnoredTarget, torch::kInt64);            // (B, T)
  auto in = inputs.accessor<int64_t, 2>();
  auto tg = targets.accessor<int64_t, 2>();
  Batch batch;
  for (int64_t b = 0; b < B; ++b) {
    const TokenizedExample& e = *examples[b];
    const int64_t n = static_cast<int64_t>(e.tokens.size());
    DRAGON_CHECK(n >= 2 && e.script_start >= 1, "an example of {} tokens, script at {}", n, e.script_start);
    for (int64_t i = 0; i + 1 < n; ++i) {
      in[b][i] = e.tokens[i];
      if (i + 1 >= static_cast<int64_t>(e.script_start)) {
        tg[b][i] = e.tokens[i + 1];
        ++batch.target_tokens;
      }
    }
    batch.tokens += n - 1;
    batch.squared_lengths += (n - 1) * (n - 1);
  }
  batch.inputs = inputs.to(device);
  batch.targets = targets.to(device);
  return batch;
}

double training_flops(const ModelConfig& config, const Batch& batch) {
  // Forward: 2 per parameter per token, and q.k plus p.v (2 x 2 x d_model) per visible pair;
  // the backward pass twice the forward.
  const double pairs = 0.5 * static_cast<double>(batch.squared_lengths + batch.tokens);
  return 6.0 * static_cast<double>(config.parameter_count()) * static_cast<double>(batch.tokens) +
         12.0 * static_cast<double>(config.layers * config.d_model) * pairs;
}

torch::Tensor sft_loss(Transformer& model, const Batch& batch) {
  torch::Tensor logits = model->forward(batch.inputs);  // (B, T, V)
  const int64_t V = logits.size(-1);
  return torch::nn::functional::cross_entropy(
      logits.reshape({-1, V}), batch.targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnoredTarget));
}

AdamW::AdamW(std::vector<std::pair<std::string, torch::Tensor>> named_parameters, Settings settings)
    : settings_(settings) {
  for (auto& [name, p] : named_parameters) {
    ParamState s;
    s.name = name;
    s.param = p;
    s.exp_avg = torch::zeros_like(p);
    s.exp_avg_sq = torch::zeros_like(p);
    s.decay = p.dim() >= 2;
    state_.push_back(std::move(s));
  }
}

void AdamW::step(double lr) {
  torch::NoGradGuard no_grad;
  ++steps_;
  const double correction1 = 1.0 - std::pow(settings_.beta1, static_cast<double>(steps_));
  const double correction2 = 1.0 - std::pow(settings_.beta2, static_cast<double>(steps_));
  for (ParamState& s : state_) {
    const torch::Tensor& grad = s.param.grad();
    if (!grad.defined()) continue;
    // The same order of operations as torch's AdamW (single-tensor path), so results match it.
    if (s.decay && settings_.weight_decay != 0) s.param.mul_(1.0 - lr * settings_.weight_decay);
    s.exp_avg.mul_(settings_.beta1).add_(grad, 1.0 - settings_.beta1);
    s.exp_avg_sq.mul_(settings_.beta2).addcmul_(grad, grad, 1.0 - settings_.beta2);
    torch::Tensor denom = (s.exp_avg_sq.sqrt() / std::sqrt(correction2)).add_(settings_.eps);
    s.param.addcdiv_(s.exp_avg, denom, -lr / correction1);
  }
}

void AdamW::zero_grad() {
  for (ParamState& s : state_) {
    if (s.param.grad().defined()) {
      s.param.mutable_grad().detach_();
      s.param.mutable_grad().zero_();
    }
  }
}

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
  return order;
}

StepResult train_step(Transformer& model, AdamW& optimizer, const Batch& batch, double lr, double grad_clip) {
  optimizer.zero_grad();
  torch::Tensor loss = sft_loss(model, batch);
  loss.backward();
  std::vector<torch::Tensor> params;
  for (const AdamW::ParamState& s : optimizer.state()) params.push_back(s.param);
  StepResult result;
  result.loss = loss.item<double>();
  // clip_grad_norm_ returns the norm before clipping; with max_norm = inf it only measures.
  const double max_norm = grad_clip > 0 ? grad_clip : std::numeric_limits<double>::infinity();
  result.grad_norm = torch::nn::utils::clip_grad_norm_(params, max_norm);
  optimizer.step(lr);
  return result;
}

}  // namespace dragon::model

namespace dragon::model {

Evaluation evaluate(Transformer& model, std::span<const TokenizedExample> examples, int64_t batch_size,
                    script::TokenId pad) {
  torch::NoGradGuard no_grad;
  const torch::Device device = model->embedding->weight.device();
  Evaluation e;
  double loss_sum = 0;
  int64_t targets = 0, correct = 0, exact = 0;
  for (size_t begin = 0; begin < examples.size(); begin += static_cast<size_t>(batch_size)) {
    const size_t end = std::min(examples.size(), begin + static_cast<size_t>(batch_size));
    std::vector<const TokenizedExample*> group;
    for (size_t i = begin; i < end; ++i) group.push_back(&examples[i]);
    Batch batch = make_batch(group, pad, device);
    torch::Tensor logits = model->forward(batch.inputs);  // (B, T, V)
    const int64_t V = logits.size(-1);
    torch::Tensor mask = batch.targets.ne(kIgnoredTarget);  // (B, T)
    torch::Tensor ce = torch::nn::functional::cross_entropy(
        logits.reshape({-1, V}), batch.targets.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(kIgnoredTarget).reduction(torch::kSum));
    loss_sum += ce.item<double>();
    torch::Tensor right = logits.argmax(-1).eq(batch.targets).logical_and(mask);  // (B, T)
    targets += mask.sum().item<int64_t>();
    correct += right.sum().item<int64_t>();
    // An example is exact when it has no target position that is wrong.
    exact += mask.logical_and(right.logical_not()).any(1).logical_not().sum().item<int64_t>();
  }
  e.examples = static_cast<int64_t>(examples.size());
  e.loss = targets > 0 ? loss_sum / static_cast<double>(targets) : 0;
  e.token_accuracy = targets > 0 ? static_cast<double>(correct) / static_cast<double>(targets) : 0;
  e.exact_match = e.examples > 0 ? static_cast<double>(exact) / static_cast<double>(e.examples) : 0;
  return e;
}

}  // namespace dragon::model
