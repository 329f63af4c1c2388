// Eager (ATen) computations of the fused op family: the unfused torch sequence a model
// runs for each chain; see eager_op_table.h.
#include "eager_op_table.h"

#include <stdexcept>

namespace dragon::bench::torch_eager {
namespace {

at::Tensor activate(const std::string& activation, const at::Tensor& x) {
  if (activation == "none") return x;
  if (activation == "relu") return at::relu(x);
  if (activation == "gelu") return at::gelu(x);  // the exact erf form, torch's default
  if (activation == "silu") return at::silu(x);
  if (activation == "sigmoid") return at::sigmoid(x);
  if (activation == "hardsigmoid") return at::hardsigmoid(x);
  if (activation == "hardswish") return at::hardswish(x);
  throw std::runtime_error("eager baselines: matmul_bias_act has no activation " + activation);
}

// nn.Linear (w stored n x k, trans_w) is at::linear; x @ w + bias otherwise is at::addmm.
// Inputs: x, w, bias.
std::vector<at::Tensor> run_matmul_bias_act(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  const at::Tensor& w = inputs.at(1);
  const at::Tensor& bias = inputs.at(2);
  at::Tensor product = params.get_bool("trans_w") ? at::linear(x, w, bias) : at::addmm(bias, x, w);
  return {activate(params.get_choice("activation"), product).contiguous()};
}

// Inputs: x, residual, weight, bias. Outputs: out, and the sum with return_sum.
std::vector<at::Tensor> run_add_layer_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  at::Tensor sum = at::add(inputs.at(0), inputs.at(1));
  at::Tensor out = at::layer_norm(sum, {sum.size(-1)}, inputs.at(2), inputs.at(3), params.get_float("eps"));
  if (params.get_bool("return_sum")) return {out.contiguous(), sum.contiguous()};
  return {out.contiguous()};
}

// h * rsqrt(mean(h^2) + eps) * weight with h = x + residual rounded to the input type,
// the statistics and products in f32 for 16-bit types (torch.nn.RMSNorm's upcast).
// Composed, since at::rms_norm is newer than torch 1.13. Inputs: x, residual, weight.
std::vector<at::Tensor> run_add_rms_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  at::Tensor sum = at::add(inputs.at(0), inputs.at(1));
  at::ScalarType type = sum.scalar_type();
  bool narrow = type == at::kHalf || type == at::kBFloat16;
  at::Tensor h = narrow ? sum.to(at::kFloat) : sum;
  at::Tensor weight = narrow ? inputs.at(2).to(at::kFloat) : inputs.at(2);
  at::Tensor inv_rms = at::rsqrt(h.pow(2).mean(-1, /*keepdim=*/true) + params.get_float("eps"));
  at::Tensor out = (h * inv_rms * weight).to(type);
  if (params.get_bool("return_sum")) return {out.contiguous(), sum.contiguous()};
  return {out.contiguous()};
}

}  // namespace

void add_fused_ops(EagerOpTable& table) {
  table.add("matmul_bias_act", "at::addmm / at::linear (cuBLAS on CUDA), then the activation", run_matmul_bias_act);
  table.add("add_layer_norm", "at::add, then at::layer_norm", run_add_layer_norm);
  table.add("add_rms_norm", "at::add, then at::rsqrt(at::mean(h^2) + eps) * weight (composed RMSNorm)",
            run_add_rms_norm);
}

}  // namespace dragon::bench::torch_eager
