// Eager (ATen) computations of the norm op family; see eager_op_table.h. The nn modules of
// KernelBench 33-35 and 40 are their functional ATen calls; 36-39 are KernelBench's
// hand-written compositions, in its order of operations (so f16 and bf16 round x**2 and
// the statistics to the element type where torch does; our PrimFuncs keep them in f32).
#include <cstdint>
#include <vector>

#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

// nn.BatchNorm's momentum: it only moves running statistics, which no output shows.
constexpr double kMomentum = 0.1;

// Inputs: X, weight, bias, then (eval mode only) running_mean, running_var. Training mode
// passes no running statistics: the module would update its buffers as a side effect, the
// output is the same (the batch's own statistics, biased variance).
std::vector<at::Tensor> batch_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  bool training = params.get_bool("training");
  at::Tensor running_mean = training ? at::Tensor() : inputs.at(3);
  at::Tensor running_var = training ? at::Tensor() : inputs.at(4);
  return {at::batch_norm(inputs.at(0), inputs.at(1), inputs.at(2), running_mean, running_var, training, kMomentum,
                         params.get_float("eps"), /*cudnn_enabled=*/true)};
}

// Inputs: X, then weight and bias when affine. nn.InstanceNorm's default
// track_running_stats=False: always the input's statistics.
std::vector<at::Tensor> instance_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  bool affine = params.get_bool("affine");
  at::Tensor weight = affine ? inputs.at(1) : at::Tensor();
  at::Tensor bias = affine ? inputs.at(2) : at::Tensor();
  return {at::instance_norm(inputs.at(0), weight, bias, at::Tensor(), at::Tensor(), /*use_input_stats=*/true,
                            kMomentum, params.get_float("eps"), /*cudnn_enabled=*/true)};
}

std::vector<at::Tensor> group_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  return {at::group_norm(inputs.at(0), params.get_int("num_groups"), inputs.at(1), inputs.at(2),
                         params.get_float("eps"), /*cudnn_enabled=*/true)};
}

// normalized_shape is the last normalized_dims extents of X.
std::vector<at::Tensor> layer_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  int64_t dims = params.get_int("normalized_dims");
  at::IntArrayRef normalized = x.sizes().slice(static_cast<size_t>(x.dim() - dims));
  bool affine = params.get_bool("elementwise_affine");
  at::Tensor weight = affine ? inputs.at(1) : at::Tensor();
  at::Tensor bias = affine ? inputs.at(2) : at::Tensor();
  return {at::layer_norm(x, normalized, weight, bias, params.get_float("eps"), /*cudnn_enable=*/true)};
}

// KernelBench 36: x / torch.sqrt(torch.mean(x ** 2, dim=axis, keepdim=True) + eps).
// (at::rms_norm is newer than libtorch 1.13, and KernelBench does not call it.)
std::vector<at::Tensor> rms_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  std::vector<int64_t> axis{params.get_int("axis")};
  at::Tensor rms = at::sqrt(at::mean(at::pow(x, 2), at::IntArrayRef(axis), /*keepdim=*/true) + params.get_float("eps"));
  return {x / rms};
}

// KernelBench 38: x / torch.mean(torch.abs(x), dim=axis, keepdim=True).
std::vector<at::Tensor> l1_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  std::vector<int64_t> axis{params.get_int("axis")};
  return {x / at::mean(at::abs(x), at::IntArrayRef(axis), /*keepdim=*/true)};
}

// KernelBench 39: x / torch.norm(x, p=2, dim=axis, keepdim=True).
std::vector<at::Tensor> l2_norm(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  std::vector<int64_t> axis{params.get_int("axis")};
  return {x / at::norm(x, at::Scalar(2.0), at::IntArrayRef(axis), /*keepdim=*/true)};
}

// KernelBench 37: x / torch.norm(x, p='fro'); over a whole tensor torch computes the
// Frobenius norm as the vector 2-norm.
std::vector<at::Tensor> frobenius_norm(const EagerOpParams&, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  return {x / at::norm(x, at::Scalar(2.0))};
}

}  // namespace

void add_norm_ops(EagerOpTable& table) {
  table.add("batch_norm", "at::batch_norm (cuDNN on CUDA)", batch_norm);
  table.add("instance_norm", "at::instance_norm (cuDNN batch norm on CUDA)", instance_norm);
  table.add("group_norm", "at::group_norm", group_norm);
  table.add("layer_norm", "at::layer_norm", layer_norm);
  table.add("rms_norm", "x / at::sqrt(at::mean(x^2) + eps)", rms_norm);
  table.add("l1_norm", "x / at::mean(at::abs(x))", l1_norm);
  table.add("l2_norm", "x / at::norm(x, 2, axis)", l2_norm);
  table.add("frobenius_norm", "x / at::norm(x)", frobenius_norm);
}

}  // namespace dragon::bench::torch_eager
