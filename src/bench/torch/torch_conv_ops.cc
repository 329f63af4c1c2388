// Eager (ATen) computations of the conv op family; see eager_op_table.h. Our layouts are
// torch's (NC + spatial inputs, W[C_out, C_in/groups, k...] forward and
// W[C_in, C_out/groups, k...] transposed), so the tensors go to ATen as they are.
#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

// The optional bias follows the weight when `bias` is set; an undefined tensor means none.
at::Tensor optional_bias(const EagerOpParams& params, const std::vector<at::Tensor>& inputs, size_t position) {
  return params.get_bool("bias") ? inputs.at(position) : at::Tensor();
}

std::vector<at::Tensor> run_conv(int rank, const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  const at::Tensor& w = inputs.at(1);
  at::Tensor bias = optional_bias(params, inputs, 2);
  std::vector<int64_t> stride = params.get_shape("stride"), padding = params.get_shape("padding");
  std::vector<int64_t> dilation = params.get_shape("dilation");
  int64_t groups = params.get_int("groups");
  at::Tensor y;
  if (rank == 1) y = at::conv1d(x, w, bias, stride, padding, dilation, groups);
  if (rank == 2) y = at::conv2d(x, w, bias, stride, padding, dilation, groups);
  if (rank == 3) y = at::conv3d(x, w, bias, stride, padding, dilation, groups);
  return {y.contiguous()};
}

std::vector<at::Tensor> run_conv_transpose(int rank, const EagerOpParams& params,
                                           const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  const at::Tensor& w = inputs.at(1);
  at::Tensor bias = optional_bias(params, inputs, 2);
  std::vector<int64_t> stride = params.get_shape("stride"), padding = params.get_shape("padding");
  std::vector<int64_t> output_padding = params.get_shape("output_padding"), dilation = params.get_shape("dilation");
  int64_t groups = params.get_int("groups");
  at::Tensor y;
  if (rank == 1) y = at::conv_transpose1d(x, w, bias, stride, padding, output_padding, groups, dilation);
  if (rank == 2) y = at::conv_transpose2d(x, w, bias, stride, padding, output_padding, groups, dilation);
  if (rank == 3) y = at::conv_transpose3d(x, w, bias, stride, padding, output_padding, groups, dilation);
  return {y.contiguous()};
}

// KernelBench 86's module: a depthwise Conv2d (groups = channels) then a 1x1 Conv2d.
// Inputs: X, W_depthwise, [bias_depthwise], W_pointwise, [bias_pointwise].
std::vector<at::Tensor> run_depthwise_separable_conv2d(const EagerOpParams& params,
                                                       const std::vector<at::Tensor>& inputs) {
  bool has_bias = params.get_bool("bias");
  const at::Tensor& x = inputs.at(0);
  const at::Tensor& w_depthwise = inputs.at(1);
  at::Tensor bias_depthwise = has_bias ? inputs.at(2) : at::Tensor();
  const at::Tensor& w_pointwise = inputs.at(has_bias ? 3 : 2);
  at::Tensor bias_pointwise = has_bias ? inputs.at(4) : at::Tensor();
  int64_t channels = params.get_int("in_channels");
  at::Tensor mid = at::conv2d(x, w_depthwise, bias_depthwise, params.get_shape("stride"), params.get_shape("padding"),
                              params.get_shape("dilation"), channels);
  return {at::conv2d(mid, w_pointwise, bias_pointwise).contiguous()};
}

}  // namespace

void add_conv_ops(EagerOpTable& table) {
  for (int rank = 1; rank <= 3; ++rank) {
    std::string dims = std::to_string(rank) + "d";
    table.add("conv" + dims, "at::conv" + dims + " (cuDNN on CUDA)",
              [rank](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
                return run_conv(rank, params, inputs);
              });
    table.add("conv_transpose" + dims, "at::conv_transpose" + dims + " (cuDNN on CUDA)",
              [rank](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
                return run_conv_transpose(rank, params, inputs);
              });
  }
  table.add("depthwise_separable_conv2d", "at::conv2d depthwise, then at::conv2d 1x1 (cuDNN on CUDA)",
            run_depthwise_separable_conv2d);
}

}  // namespace dragon::bench::torch_eager
