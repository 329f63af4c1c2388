// What the key/value cache saves when the little dragon writes a script: N tokens drawn
// greedily (no constraint, so only the model is timed) after a P-token prompt, once with
// generate() (the prompt read once, then one position a step) and once the way sampling
// worked before the cache (every step a forward pass over the whole sequence so far). Both
// must write the same tokens; it prints ms per token of each and the ratio. Then K
// continuations sampled at temperature 1 (seeds 1..K), one at a time and side by side
// (generate_side_by_side: one batch a step), which must also write the same tokens.
//
//   bench_generation [N [P [PRESET [THREADS [K [DEVICE]]]]]]   (N 512, P 32, PRESET small,
//                                     THREADS: libtorch's, K 8, DEVICE cpu; cuda: bf16 products)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dragon/model/model_config.h"
#include "dragon/script/tokenizer.h"
#include "sampling.h"
#include "transformer.h"

using namespace dragon;

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 512;
  const int64_t p = argc > 2 ? std::atoll(argv[2]) : 32;
  const std::string preset = argc > 3 ? argv[3] : "small";
  if (argc > 4) torch::set_num_threads(std::atoi(argv[4]));
  const int64_t k = argc > 5 ? std::atoll(argv[5]) : 8;
  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  model::ModelConfig config = model::ModelConfig::preset(preset, static_cast<int64_t>(tokenizer.size()));
  model::Transformer transformer(config, 1);
  transformer->eval();
  const bool cuda = argc > 6 && std::string(argv[6]) == "cuda";
  if (cuda) {
    transformer->to(torch::kCUDA);
    transformer->set_compute_type(torch::kBFloat16);
  }
  // Both runs stop only at N tokens: the sequence must fit the context, checked before
  // minutes of work rather than at the end of the slower run.
  if (p < 1 || n < 1 || p + n > config.context) {
    std::fprintf(stderr, "bench_generation: a %lld-token prompt and %lld new tokens need 1 <= P, 1 <= N and P + N <= %lld "
                 "(the %s preset's context)\n", static_cast<long long>(p), static_cast<long long>(n),
                 static_cast<long long>(config.context), preset.c_str());
    return 2;
  }
  std::vector<script::TokenId> prompt;
  for (int64_t i = 0; i < p; ++i) prompt.push_back(static_cast<script::TokenId>(7 + i));
  // An id the untrained model is unlikely to draw, so that both runs write all N tokens.
  const script::TokenId never = static_cast<script::TokenId>(config.vocab - 1);
  using clock = std::chrono::steady_clock;

  auto start = clock::now();
  const model::Generation cached =
      model::generate(transformer, prompt, never, {.temperature = 0, .top_p = 1, .max_new_tokens = n, .seed = 1}, nullptr);
  const double cached_s = std::chrono::duration<double>(clock::now() - start).count();

  torch::NoGradGuard no_grad;
  std::vector<int64_t> sequence(prompt.begin(), prompt.end());
  std::vector<script::TokenId> whole;
  start = clock::now();
  while (static_cast<int64_t>(whole.size()) < n) {
    torch::Tensor ids = torch::tensor(sequence, torch::kInt64).view({1, -1}).to(cuda ? torch::kCUDA : torch::kCPU);
    const auto next = static_cast<script::TokenId>(transformer->forward(ids)[0][-1].argmax().item<int64_t>());
    if (next == never) break;
    whole.push_back(next);
    sequence.push_back(next);
  }
  const double whole_s = std::chrono::duration<double>(clock::now() - start).count();

  std::printf("%s model (%lld parameters) on %s, %lld-token prompt, %zu tokens, %d threads\n", preset.c_str(),
              static_cast<long long>(config.parameter_count()), cuda ? "cuda (bf16 products)" : "cpu",
              static_cast<long long>(p), cached.tokens.size(), torch::get_num_threads());
  std::printf("key/value cache:       %8.2f ms/token (%.2f s)\n", 1e3 * cached_s / cached.tokens.size(), cached_s);
  std::printf("whole sequence a step: %8.2f ms/token (%.2f s)\n", 1e3 * whole_s / whole.size(), whole_s);
  std::printf("ratio %.1fx; same tokens: %s\n", whole_s / cached_s, cached.tokens == whole ? "yes" : "NO");

  std::vector<model::SamplingSettings> settings;
  for (int64_t i = 0; i < k; ++i)
    settings.push_back({.temperature = 1, .top_p = 1, .max_new_tokens = n, .seed = static_cast<uint64_t>(i + 1)});
  start = clock::now();
  std::vector<model::Generation> alone;
  for (const model::SamplingSettings& s : settings) alone.push_back(model::generate(transformer, prompt, never, s, nullptr));
  const double alone_s = std::chrono::duration<double>(clock::now() - start).count();
  start = clock::now();
  const std::vector<model::Generation> together =
      model::generate_side_by_side(transformer, prompt, never, settings, std::vector<model::TokenConstraint*>(k, nullptr));
  const double together_s = std::chrono::duration<double>(clock::now() - start).count();
  size_t tokens = 0;
  bool same = true;
  for (int64_t i = 0; i < k; ++i) {
    tokens += together[i].tokens.size();
    same = same && together[i].tokens == alone[i].tokens;
  }
  std::printf("%lld sampled continuations, %zu tokens in all\n", static_cast<long long>(k), tokens);
  std::printf("one at a time:         %8.2f ms/token (%.2f s)\n", 1e3 * alone_s / tokens, alone_s);
  std::printf("side by side:          %8.2f ms/token (%.2f s)\n", 1e3 * together_s / tokens, together_s);
  std::printf("ratio %.1fx; same tokens: %s\n", alone_s / together_s, same ? "yes" : "NO");
  return cached.tokens == whole && same ? 0 : 1;
}
