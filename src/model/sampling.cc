// Greedy, temperature and nucleus sampling, and the generation loop (sampling.h). The
// random draw is ours (std::mt19937_64) so that a seed gives the same script under any
// libtorch version.
#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "dragon/support/error.h"

namespace dragon::model {

std::vector<script::TokenId> nucleus(std::span<const float> probs, double top_p) {
  std::vector<script::TokenId> order(probs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](script::TokenId a, script::TokenId b) { return probs[a] > probs[b]; });
  double mass = 0;
  size_t keep = 0;
  while (keep < order.size() && (keep == 0 || mass < top_p)) mass += probs[order[keep++]];
  order.resize(keep);
  return order;
}

script::TokenId sample_token(const torch::Tensor& logits, const SamplingSettings& settings, std::mt19937_64& rng,
                             std::span<const script::TokenId> allowed, double* log_prob) {
  torch::Tensor host = logits.detach().to(torch::kCPU, torch::kFloat32).contiguous();  // (V)
  const int64_t V = host.size(0);
  const float* l = host.data_ptr<float>();
  // Candidates: the allowed ids, or all.
  std::vector<script::TokenId> ids;
  if (allowed.empty()) {
    ids.resize(V);
    std::iota(ids.begin(), ids.end(), 0);
  } else {
    for (script::TokenId id : allowed) {
      DRAGON_CHECK(id >= 0 && id < V, "allowed token {} outside the vocabulary of {}", id, V);
      ids.push_back(id);
    }
  }
  if (settings.temperature <= 0) {
    script::TokenId best = ids[0];
    for (script::TokenId id : ids) {
      if (l[id] > l[best]) best = id;  // ids ascend: ties keep the lowest
    }
    if (log_prob != nullptr) *log_prob = 0;
    return best;
  }
  // Softmax of logits / temperature over the candidates, in double.
  double top = -std::numeric_limits<double>::infinity();
  for (script::TokenId id : ids) top = std::max(top, static_cast<double>(l[id]));
  std::vector<float> probs(ids.size());
  double total = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const double p = std::exp((static_cast<double>(l[ids[i]]) - top) / settings.temperature);
    probs[i] = static_cast<float>(p);
    total += p;
  }
  for (float& p : probs) p = static_cast<float>(p / total);
  std::vector<script::TokenId> kept = nucleus(probs, settings.top_p);  // indexes into ids
  double kept_mass = 0;
  for (script::TokenId k : kept) kept_mass += probs[k];
  const double u = std::uniform_real_distribution<double>(0.0, kept_mass)(rng);
  double cumulative = 0;
  script::TokenId chosen = kept.back();  // u at the very top of the range (rounding)
  for (script::TokenId k : kept) {
    cumulative += probs[k];
    if (u < cumulative) {
      chosen = k;
      break;
    }
  }
  if (log_prob != nullptr) {
    // In double from the logits, not from the float probabilities: the trainer recomputes
    // it with a log-softmax and the two must agree to rounding. Without a nucleus cut
    // (top_p 1) kept_mass is 1 up to rounding and is left out.
    *log_prob = (static_cast<double>(l[ids[chosen]]) - top) / settings.temperature - std::log(total);
    if (kept.size() < ids.size()) *log_prob -= std::log(kept_mass);
  }
  return ids[chosen];
}

std::string_view stop_name(Generation::Stop stop) {
  switch (stop) {
    case Generation::Stop::kEos: return "eos";
    case Generation::Stop::kMaxTokens: return "max_new_tokens";
    case Generation::Stop::kContextFull: return "context full";
    case Generation::Stop::kNothingAllowed: return "no token allowed";
  }
  return "?";
}

Generation generate(Transformer& model, std::span<const script::TokenId> prompt, script::TokenId eos,
                    const SamplingSettings& settings, TokenConstraint* constraint, PolicyRecord* record) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const torch::Device device = model->embedding->weight.device();
  std::mt19937_64 rng(settings.seed);
  // The prompt is read once; each step then feeds the one token drawn last, the earlier
  // positions' keys and values coming from the cache.
  KeyValueCache cache;
  std::vector<int64_t> pending(prompt.begin(), prompt.end());
  int64_t length = static_cast<int64_t>(pending.size());
  Generation out;
  out.stop = Generation::Stop::kMaxTokens;
  while (static_cast<int64_t>(out.tokens.size()) < settings.max_new_tokens) {
    if (length >= model->config.context) {
      out.stop = Generation::Stop::kContextFull;
      break;
    }
    std::vector<script::TokenId> allowed;
    if (constraint != nullptr) {
      allowed = constraint->allowed(out.tokens);
      if (allowed.empty()) {
        out.stop = Generation::Stop::kNothingAllowed;
        break;
      }
    }
    torch::Tensor ids = torch::tensor(pending, torch::kInt64).view({1, -1}).to(device);  // (1, T new)
    torch::Tensor logits = model->forward(ids, cache).select(0, 0).select(0, -1);       // (V)
    double log_prob = 0;
    const script::TokenId next = sample_token(logits, settings, rng, allowed, &log_prob);
    if (record != nullptr) {
      record->actions.push_back(next);
      record->log_probs.push_back(log_prob);
      record->allowed.push_back(allowed);
    }
    if (next == eos) {
      out.stop = Generation::Stop::kEos;
      break;
    }
    out.tokens.push_back(next);
    pending.assign(1, next);
    ++length;
  }
  model->train(was_training);
  return out;
}

}  // namespace dragon::model
