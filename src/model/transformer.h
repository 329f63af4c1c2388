// The little dragon: a decoder-only transformer over the script tokenizer's vocabulary,
// llm.c-style (CONVENTIONS.md habit 14): pre-RMSNorm blocks of causal self-attention with
// rotary positions and a SwiGLU feed-forward, the token embedding tied with the output
// head. Shapes: B batch, T positions, C d_model, H heads, D head_dim, F ffn, V vocab.
// A libtorch header: only src/model and its tests include it.
#pragma once

#include "torch_api.h"

#include "dragon/model/model_config.h"

namespace dragon::model {

// x / sqrt(mean(x^2) + eps) * gain over the last dimension (no mean subtraction, no bias).
struct RMSNormImpl : torch::nn::Module {
  RMSNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);  // (..., C) -> (..., C)
  torch::Tensor gain;                             // (C), starts at 1
  double eps;
};
TORCH_MODULE(RMSNorm);

// Rotary positions (RoFormer): the two halves of each head vector, (x1, x2), are turned by
// an angle pos * base^(-2i/D) per pair i: (x1 cos - x2 sin, x1 sin + x2 cos). Attention
// scores then depend on the positions of query and key only through their difference.
// x: (B, H, T, D); cos, sin: (T, D/2). Returns (B, H, T, D).
torch::Tensor apply_rotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);
// The tables for positions 0..context-1: {cos, sin}, each (context, D/2), float32.
std::pair<torch::Tensor, torch::Tensor> rotary_tables(int64_t context, int64_t head_dim, double base);

// What incremental decoding keeps of the positions already read: each layer's keys (rotated)
// and values for the P positions so far. Reading token P+1 then costs one position's work
// instead of the whole sequence's. Empty until the first forward with it.
//
// Without a capacity (0) each forward concatenates its positions onto the tensors, (B, H, P, D):
// in training these are what autograd keeps anyway, but decoding token by token would copy
// the whole cache into a fresh tensor per layer per token, O(P^2) traffic and allocation
// over a script. With a capacity, set before the first forward, that forward allocates
// (B, H, capacity, D) per layer and every forward writes its T positions in place, at
// P..P+T-1: a step copies one position. The writes are in place, so decode with it under
// NoGradGuard. Rows (dim 0) may be copied, expanded or selected between forwards.
struct KeyValueCache {
  std::vector<torch::Tensor> keys, values;  // per layer, (B, H, P, D), or (B, H, capacity, D) of which P written
  int64_t capacity = 0;                     // positions reserved; 0: grow by concatenation
  int64_t filled = 0;                       // P; TransformerImpl::forward advances it
  int64_t length() const { return filled; }
};

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const ModelConfig& config);
  // x: (B, T, C); cos, sin: (T, D/2) for x's positions -> (B, T, C). Position t attends to
  // 0..t only. With a cache holding P = cache->length() positions (possibly 0), x holds
  // positions P..P+T-1, attends to the past as well, and the cache's keys and values of
  // `layer` gain x's; the caller advances cache->filled once every layer has run.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        KeyValueCache* cache = nullptr, size_t layer = 0);
  torch::nn::Linear qkv{nullptr};  // C -> 3C: queries, keys, values of every head
  torch::nn::Linear out{nullptr};  // C -> C
  int64_t heads, head_dim;
  torch::ScalarType compute = torch::kFloat32;  // of the products (TransformerImpl::set_compute_type)
};
TORCH_MODULE(CausalSelfAttention);

// down(silu(gate(x)) * up(x)).
struct SwiGLUImpl : torch::nn::Module {
  explicit SwiGLUImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);  // (B, T, C) -> (B, T, C)
  torch::nn::Linear gate{nullptr}, up{nullptr};   // C -> F
  torch::nn::Linear down{nullptr};                // F -> C
  torch::ScalarType compute = torch::kFloat32;
};
TORCH_MODULE(SwiGLU);

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const ModelConfig& config);
  // x + attn(norm(x)), then + ffn(norm(.)): (B, T, C) -> (B, T, C); past as in attention.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        KeyValueCache* cache = nullptr, size_t layer = 0);
  RMSNorm attn_norm{nullptr}, ffn_norm{nullptr};
  CausalSelfAttention attn{nullptr};
  SwiGLU ffn{nullptr};
};
TORCH_MODULE(Block);

struct TransformerImpl : torch::nn::Module {
  // Weights drawn from N(0, 0.02) (output projections of each residual branch scaled by
  // 1/sqrt(2L), as GPT-2 does) from a generator seeded with `seed`: same seed, same model.
  TransformerImpl(const ModelConfig& config, uint64_t seed);
  // ids: (B, T) int64 with T <= context -> logits (B, T, V), float32.
  torch::Tensor forward(const torch::Tensor& ids);
  // The same for ids at positions cache.length().. of a sequence whose earlier positions the
  // cache holds (empty: from 0), which then holds them all: feeding a sequence in pieces
  // gives the logits of feeding it whole. Needs cache.length() + T <= context, and <= the
  // cache's capacity if it has one.
  torch::Tensor forward(const torch::Tensor& ids, KeyValueCache& cache);
  // The type the matrix products and attention run in: float32, which means the
  // parameters' own type (the default), or bfloat16 (tensor cores on the GPU: mixed
  // precision). Parameters, the residual stream, norms, the softmax and the logits keep
  // the parameters' type either way; the cache holds keys and values in the products' type.
  void set_compute_type(torch::ScalarType type);
  torch::ScalarType compute_type() const { return compute; }

  ModelConfig config;
  torch::nn::Embedding embedding{nullptr};  // (V, C), also the output head
  torch::nn::ModuleList blocks{nullptr};    // L x Block
  RMSNorm final_norm{nullptr};
  torch::Tensor rotary_cos, rotary_sin;     // (context, D/2) buffers, not parameters

 private:
  torch::ScalarType compute = torch::kFloat32;
};
TORCH_MODULE(Transformer);

}  // namespace dragon::model
