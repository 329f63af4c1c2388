// Greedy, temperature and nucleus sampling, and the generation loop (sampling.h). The
// random draw is ours (std::mt19937_64) so that a seed gives the same script under any
// libtorch version.
#include "sampling.h"

#include <algorithm>
#include <chrono>
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
  TokenConstraint* constraints[] = {constraint};
  PolicyRecord* records[] = {record};
  return generate_side_by_side(model, prompt, eos, std::span(&settings, 1), constraints,
                               record != nullptr ? std::span<PolicyRecord* const>(records) : std::span<PolicyRecord* const>())
      .front();
}

std::vector<Generation> generate_side_by_side(Transformer& model, std::span<const script::TokenId> prompt,
                                              script::TokenId eos, std::span<const SamplingSettings> settings,
                                              std::span<TokenConstraint* const> constraints,
                                              std::span<PolicyRecord* const> records) {
  const size_t n = settings.size();
  DRAGON_CHECK(constraints.empty() || constraints.size() == n, "{} constraints for {} continuations", constraints.size(), n);
  DRAGON_CHECK(records.empty() || records.size() == n, "{} policy records for {} continuations", records.size(), n);
  DRAGON_CHECK(!prompt.empty(), "generation needs a prompt of at least one token");
  std::vector<Generation> out(n);
  if (n == 0) return out;
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const torch::Device device = model->embedding->weight.device();
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::mt19937_64> rngs;
  for (const SamplingSettings& s : settings) rngs.emplace_back(s.seed);
  for (Generation& g : out) g.stop = Generation::Stop::kMaxTokens;
  int64_t length = static_cast<int64_t>(prompt.size());
  if (length >= model->config.context) {  // no room for one token
    for (size_t i = 0; i < n; ++i) {
      if (settings[i].max_new_tokens > 0) out[i].stop = Generation::Stop::kContextFull;
    }
    model->train(was_training);
    return out;
  }

  // The prompt is read once, as a batch of one; its keys and values are then copied for
  // every continuation. `going[r]` is the continuation in row r of the cache. The cache
  // reserves at once the most positions it can come to hold, the prompt and the longest
  // continuation within the context, and each step writes its one position in place: grown
  // by concatenation it would copy itself whole every token (KeyValueCache).
  KeyValueCache cache;
  int64_t longest = 0;
  for (const SamplingSettings& s : settings)
    longest = std::max(longest, std::min(s.max_new_tokens, model->config.context));
  cache.capacity = std::min(model->config.context, length + longest);
  torch::Tensor ids = torch::tensor(std::vector<int64_t>(prompt.begin(), prompt.end()), torch::kInt64).view({1, -1});
  torch::Tensor logits = model->forward(ids.to(device), cache).select(1, -1);  // (1, V)
  for (size_t layer = 0; layer < cache.keys.size(); ++layer) {
    cache.keys[layer] = cache.keys[layer].expand({static_cast<int64_t>(n), -1, -1, -1}).contiguous();
    cache.values[layer] = cache.values[layer].expand({static_cast<int64_t>(n), -1, -1, -1}).contiguous();
  }
  logits = logits.expand({static_cast<int64_t>(n), -1});
  std::vector<size_t> going(n);
  std::iota(going.begin(), going.end(), 0);
  auto stop = [&](size_t i, Generation::Stop why) {
    out[i].stop = why;
    out[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (!going.empty()) {
    // One token for each continuation still going, from its row of the logits.
    torch::Tensor host = logits.detach().to(torch::kCPU, torch::kFloat32).contiguous();  // (rows, V)
    std::vector<int64_t> kept_rows, next_tokens;
    std::vector<size_t> still_going;
    for (size_t row = 0; row < going.size(); ++row) {
      const size_t i = going[row];
      Generation& g = out[i];
      if (static_cast<int64_t>(g.tokens.size()) >= settings[i].max_new_tokens) {
        stop(i, Generation::Stop::kMaxTokens);
        continue;
      }
      if (length >= model->config.context) {
        stop(i, Generation::Stop::kContextFull);
        continue;
      }
      TokenConstraint* constraint = constraints.empty() ? nullptr : constraints[i];
      // A question to the constraint, its time counted as the continuation's.
      auto ask = [&](auto question) {
        const auto asked = std::chrono::steady_clock::now();
        auto answer = question();
        g.constraint_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
        return answer;
      };
      std::vector<script::TokenId> allowed;
      if (constraint != nullptr) {
        allowed = ask([&] { return constraint->allowed(g.tokens); });
        if (allowed.empty()) {
          stop(i, Generation::Stop::kNothingAllowed);
          continue;
        }
      }
      double log_prob = 0;
      script::TokenId next = sample_token(host[static_cast<int64_t>(row)], settings[i], rngs[i], allowed, &log_prob);
      // The constraint may refuse the end it allowed (may_end): the draw is made again
      // without EOS, from the same logits, until it ends where allowed or nothing is left.
      while (next == eos && constraint != nullptr && !ask([&] { return constraint->may_end(g.tokens); })) {
        ++g.ends_refused;
        allowed.erase(std::remove(allowed.begin(), allowed.end(), eos), allowed.end());
        if (allowed.empty()) break;
        next = sample_token(host[static_cast<int64_t>(row)], settings[i], rngs[i], allowed, &log_prob);
      }
      if (constraint != nullptr && allowed.empty()) {  // only EOS was allowed, and refused
        stop(i, Generation::Stop::kNothingAllowed);
        continue;
      }
      if (!records.empty() && records[i] != nullptr) {
        records[i]->actions.push_back(next);
        records[i]->log_probs.push_back(log_prob);
        records[i]->allowed.push_back(std::move(allowed));
      }
      if (next == eos) {
        stop(i, Generation::Stop::kEos);
        continue;
      }
      g.tokens.push_back(next);
      kept_rows.push_back(static_cast<int64_t>(row));
      next_tokens.push_back(next);
      still_going.push_back(i);
    }
    if (still_going.empty()) break;
    // The rows of continuations that stopped leave the cache.
    if (still_going.size() < going.size()) {
      const torch::Tensor rows = torch::tensor(kept_rows, torch::kInt64).to(device);
      for (size_t layer = 0; layer < cache.keys.size(); ++layer) {
        cache.keys[layer] = cache.keys[layer].index_select(0, rows);
        cache.values[layer] = cache.values[layer].index_select(0, rows);
      }
    }
    going = std::move(still_going);
    ids = torch::tensor(next_tokens, torch::kInt64).view({-1, 1}).to(device);  // (rows, 1)
    logits = model->forward(ids, cache).select(1, -1);                          // (rows, V)
    ++length;
  }
  model->train(was_training);
  return out;
}

}  // namespace dragon::model
