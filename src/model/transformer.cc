// The transformer's forward pass and initialisation (transformer.h).
#include "transformer.h"

#include <cmath>

#include "dragon/support/error.h"

namespace dragon::model {

RMSNormImpl::RMSNormImpl(int64_t dim, double eps_) : eps(eps_) {
  gain = register_parameter("gain", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  // (..., C) -> (..., 1): the root mean square of each vector.
  torch::Tensor rms = torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return x * rms * gain;
}

std::pair<torch::Tensor, torch::Tensor> rotary_tables(int64_t context, int64_t head_dim, double base) {
  const int64_t pairs = head_dim / 2;
  // (D/2): base^(-2i/D), in double so long contexts keep their angles exact to float.
  torch::Tensor inv_freq =
      torch::pow(base, -torch::arange(0, pairs, torch::kFloat64) * 2.0 / static_cast<double>(head_dim));
  torch::Tensor positions = torch::arange(0, context, torch::kFloat64);  // (T)
  torch::Tensor angles = torch::outer(positions, inv_freq);              // (T, D/2)
  return {torch::cos(angles).to(torch::kFloat32), torch::sin(angles).to(torch::kFloat32)};
}

torch::Tensor apply_rotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  torch::Tensor x1 = x.narrow(-1, 0, half);     // (B, H, T, D/2)
  torch::Tensor x2 = x.narrow(-1, half, half);  // (B, H, T, D/2)
  // cos, sin: (T, D/2) broadcast over B and H.
  return torch::cat({x1 * cos - x2 * sin, x1 * sin + x2 * cos}, -1);
}

namespace {

// x @ weight^T, in bf16 when `compute` says so (tensor cores on the GPU; the float32
// weight stays the parameter, gradients reaching it through the cast), otherwise in the
// parameters' own type (float32, or double in the gradient checks).
torch::Tensor project(const torch::Tensor& x, const torch::Tensor& weight, torch::ScalarType compute) {
  if (compute != torch::kBFloat16) return torch::matmul(x, weight.t());
  return torch::matmul(x.to(compute), weight.to(compute).t());
}

// softmax(q k^T / sqrt(D)) v for queries at positions past..past+T-1 over keys 0..past+T-1,
// each query seeing keys up to its own position. q: (B, H, T, D); k, v: (B, H, past+T, D),
// all in one type; the scores are normalised in float32 whatever it is.
torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t past) {
  const int64_t T = q.size(2);
#if TORCH_VERSION_MAJOR >= 2
  // Fused attention (flash or memory-efficient kernels on the GPU): the (T, past+T) scores
  // are never stored. Debian's libtorch 1.13 lacks it and takes the path below.
  if (T == 1) return at::scaled_dot_product_attention(q, k, v);
  if (past == 0) return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
  const torch::Tensor visible =  // true where a query may look
      torch::ones({T, past + T}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).tril(past);
  return at::scaled_dot_product_attention(q, k, v, visible);
#else
  const int64_t head_dim = q.size(-1);
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1));  // (B, H, T, past+T)
  if (scores.scalar_type() == torch::kBFloat16) scores = scores.to(torch::kFloat32);
  scores = scores / std::sqrt(static_cast<double>(head_dim));
  if (T > 1) {
    torch::Tensor future =
        torch::ones({T, past + T}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).triu(past + 1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  }
  return torch::matmul(torch::softmax(scores, -1).to(q.scalar_type()), v);  // (B, H, T, D)
#endif
}

}  // namespace

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelConfig& config)
    : heads(config.heads), head_dim(config.head_dim()) {
  qkv = register_module("qkv", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, 3 * config.d_model).bias(false)));
  out = register_module("out", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, config.d_model).bias(false)));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos,
                                               const torch::Tensor& sin, KeyValueCache* cache, size_t layer) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  std::vector<torch::Tensor> parts = project(x, qkv->weight, compute).split(C, -1);  // 3 x (B, T, C)
  auto heads_first = [&](const torch::Tensor& t) { return t.view({B, T, heads, head_dim}).transpose(1, 2); };
  // The rotation runs in the tables' float32, then back to the products' type.
  const torch::ScalarType type = parts[0].scalar_type();
  torch::Tensor q = apply_rotary(heads_first(parts[0]), cos, sin).to(type);  // (B, H, T, D)
  torch::Tensor k = apply_rotary(heads_first(parts[1]), cos, sin).to(type);  // (B, H, T, D)
  torch::Tensor v = heads_first(parts[2]);                                      // (B, H, T, D)
  int64_t past = 0;
  if (cache != nullptr) {
    past = cache->length();
    torch::Tensor& keys = cache->keys[layer];
    torch::Tensor& values = cache->values[layer];
    if (cache->capacity == 0) {
      if (keys.defined()) {
        k = torch::cat({keys, k}, 2);    // (B, H, P+T, D)
        v = torch::cat({values, v}, 2);  // (B, H, P+T, D)
      }
      keys = k;
      values = v;
    } else {
      if (!keys.defined()) {
        keys = torch::empty({B, heads, cache->capacity, head_dim}, k.options());    // (B, H, capacity, D)
        values = torch::empty({B, heads, cache->capacity, head_dim}, v.options());  // (B, H, capacity, D)
      }
      keys.narrow(2, past, T).copy_(k);
      values.narrow(2, past, T).copy_(v);
      // Views of the written positions, no copy: each head's P+T rows stay contiguous (row
      // stride D), only the batch and head strides span the capacity. The products of the
      // written-out path and the fused kernels take such strides as they are.
      k = keys.narrow(2, 0, past + T);    // (B, H, P+T, D)
      v = values.narrow(2, 0, past + T);  // (B, H, P+T, D)
    }
  }
  torch::Tensor y = attend(q, k, v, past);                          // (B, H, T, D)
  y = y.transpose(1, 2).contiguous().view({B, T, C});               // (B, T, C)
  return project(y, out->weight, compute).to(x.scalar_type());
}

SwiGLUImpl::SwiGLUImpl(const ModelConfig& config) {
  gate = register_module("gate", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, config.ffn).bias(false)));
  up = register_module("up", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, config.ffn).bias(false)));
  down = register_module("down", torch::nn::Linear(torch::nn::LinearOptions(config.ffn, config.d_model).bias(false)));
}

torch::Tensor SwiGLUImpl::forward(const torch::Tensor& x) {
  torch::Tensor hidden = torch::silu(project(x, gate->weight, compute)) * project(x, up->weight, compute);  // (B, T, F)
  return project(hidden, down->weight, compute).to(x.scalar_type());
}

BlockImpl::BlockImpl(const ModelConfig& config) {
  attn_norm = register_module("attn_norm", RMSNorm(config.d_model, config.norm_eps));
  attn = register_module("attn", CausalSelfAttention(config));
  ffn_norm = register_module("ffn_norm", RMSNorm(config.d_model, config.norm_eps));
  ffn = register_module("ffn", SwiGLU(config));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                 KeyValueCache* cache, size_t layer) {
  torch::Tensor h = x + attn->forward(attn_norm->forward(x), cos, sin, cache, layer);  // (B, T, C)
  return h + ffn->forward(ffn_norm->forward(h));                         // (B, T, C)
}

TransformerImpl::TransformerImpl(const ModelConfig& config_, uint64_t seed) : config(config_) {
  config.validate();
  embedding = register_module("embedding", torch::nn::Embedding(config.vocab, config.d_model));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.layers; ++i) blocks->push_back(Block(config));
  final_norm = register_module("final_norm", RMSNorm(config.d_model, config.norm_eps));
  auto [cos, sin] = rotary_tables(config.context, config.head_dim(), config.rope_base);
  rotary_cos = register_buffer("rotary_cos", cos);
  rotary_sin = register_buffer("rotary_sin", sin);

  // A generator of our own: initialisation does not depend on (or disturb) torch's global
  // random state. Names are visited in a fixed order, so the draw is reproducible.
  torch::NoGradGuard no_grad;
  auto generator = at::detail::createCPUGenerator(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.layers));
  for (auto& named : named_parameters()) {
    const std::string& name = named.key();
    torch::Tensor& p = named.value();
    if (p.dim() < 2) continue;  // norm gains stay at 1
    const bool residual_output = name.ends_with("attn.out.weight") || name.ends_with("ffn.down.weight");
    p.normal_(0.0, residual_output ? residual_std : 0.02, generator);
  }
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& ids) {
  KeyValueCache fresh;  // the keys and values it keeps are the ones autograd keeps anyway
  return forward(ids, fresh);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& ids, KeyValueCache& cache) {
  const int64_t T = ids.size(1), past = cache.length();
  DRAGON_CHECK(past + T <= config.context, "{} cached and {} new tokens exceed the context {}", past, T,
               config.context);
  DRAGON_CHECK(cache.capacity == 0 || past + T <= cache.capacity,
               "{} cached and {} new tokens exceed the key/value cache's capacity {}", past, T, cache.capacity);
  if (cache.keys.empty()) {
    cache.keys.resize(static_cast<size_t>(config.layers));
    cache.values.resize(static_cast<size_t>(config.layers));
  }
  torch::Tensor cos = rotary_cos.narrow(0, past, T), sin = rotary_sin.narrow(0, past, T);  // (T, D/2)
  torch::Tensor x = embedding->forward(ids);                                                // (B, T, C)
  for (size_t i = 0; i < blocks->size(); ++i) {
    x = (*blocks)[i]->as<BlockImpl>()->forward(x, cos, sin, &cache, i);
  }
  cache.filled = past + T;
  x = final_norm->forward(x);                                              // (B, T, C)
  return project(x, embedding->weight, compute).to(x.scalar_type());      // (B, T, V)
}

void TransformerImpl::set_compute_type(torch::ScalarType type) {
  DRAGON_CHECK(type == torch::kFloat32 || type == torch::kBFloat16, "compute type {} is not float32 or bfloat16",
               c10::toString(type));
  compute = type;
  for (size_t i = 0; i < blocks->size(); ++i) {
    BlockImpl& block = *(*blocks)[i]->as<BlockImpl>();
    block.attn->compute = type;
    block.ffn->compute = type;
  }
}

}  // namespace dragon::model
