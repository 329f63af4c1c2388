// Eager (ATen) computation of scaled dot-product attention; see eager_op_table.h.
#include "eager_op_table.h"

#include <cmath>
#include <limits>

// torch 2.x has the fused at::scaled_dot_product_attention (flash / memory-efficient
// kernels on CUDA), which is what torch.nn.functional.scaled_dot_product_attention runs;
// 1.13 lacks it, so there the same math is composed from ATen calls. ATen ships one header
// per operator, so its presence says whether the operator exists.
#if __has_include(<ATen/ops/scaled_dot_product_attention.h>)
#define DRAGON_EAGER_HAVE_FUSED_SDPA 1
#else
#define DRAGON_EAGER_HAVE_FUSED_SDPA 0
#endif

namespace dragon::bench::torch_eager {
namespace {

// softmax(Q K^T / sqrt(head_dim), causal mask hiding key j > query i, top-left aligned) V.
// 16-bit inputs are computed in f32 and the output rounded once, as the fused kernels
// accumulate (and as our function does).
[[maybe_unused]] at::Tensor composed_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                               bool causal) {
  at::ScalarType out_type = q.scalar_type();
  bool narrow = out_type == at::kHalf || out_type == at::kBFloat16;
  at::Tensor qc = narrow ? q.to(at::kFloat) : q;
  at::Tensor kc = narrow ? k.to(at::kFloat) : k;
  at::Tensor vc = narrow ? v.to(at::kFloat) : v;
  double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  at::Tensor scores = at::matmul(qc, kc.transpose(-2, -1)) * scale;
  if (causal) {
    at::Tensor hidden = at::ones({q.size(-2), k.size(-2)}, scores.options().dtype(at::kBool)).triu(1);
    scores = scores.masked_fill(hidden, -std::numeric_limits<double>::infinity());
  }
  return at::matmul(at::softmax(scores, -1), vc).to(out_type);
}

std::vector<at::Tensor> run_scaled_dot_product_attention(const EagerOpParams& params,
                                                         const std::vector<at::Tensor>& inputs) {
  const at::Tensor& q = inputs.at(0);
  const at::Tensor& k = inputs.at(1);
  const at::Tensor& v = inputs.at(2);
  bool causal = params.get_bool("causal");
#if DRAGON_EAGER_HAVE_FUSED_SDPA
  return {at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, causal).contiguous()};
#else
  return {composed_attention(q, k, v, causal).contiguous()};
#endif
}

}  // namespace

void add_attention_ops(EagerOpTable& table) {
#if DRAGON_EAGER_HAVE_FUSED_SDPA
  const char* call = "at::scaled_dot_product_attention (flash / memory-efficient kernels on CUDA)";
#else
  const char* call = "at::matmul, at::softmax, at::matmul (torch 1.x has no fused attention)";
#endif
  table.add("scaled_dot_product_attention", call, run_scaled_dot_product_attention);
}

}  // namespace dragon::bench::torch_eager
