// Eager (ATen) computations of the pool op family; see eager_op_table.h. Our pooling
// parameters are one value for every spatial axis, torch's a list per axis.
#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

std::vector<int64_t> per_axis(int rank, int64_t value) { return std::vector<int64_t>(rank, value); }

// With return_indices the second output is torch's i64 index of each maximum into its
// flattened input plane, which is what our Y_indices holds.
std::vector<at::Tensor> run_max_pool(int rank, const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  std::vector<int64_t> kernel = per_axis(rank, params.get_int("kernel"));
  std::vector<int64_t> stride = per_axis(rank, params.get_int("stride"));
  std::vector<int64_t> padding = per_axis(rank, params.get_int("padding"));
  std::vector<int64_t> dilation = per_axis(rank, params.get_int("dilation"));
  bool ceil_mode = params.get_bool("ceil_mode");
  if (!params.get_bool("return_indices")) {
    at::Tensor y;
    if (rank == 1) y = at::max_pool1d(x, kernel, stride, padding, dilation, ceil_mode);
    if (rank == 2) y = at::max_pool2d(x, kernel, stride, padding, dilation, ceil_mode);
    if (rank == 3) y = at::max_pool3d(x, kernel, stride, padding, dilation, ceil_mode);
    return {y.contiguous()};
  }
  std::tuple<at::Tensor, at::Tensor> result;
  if (rank == 1) result = at::max_pool1d_with_indices(x, kernel, stride, padding, dilation, ceil_mode);
  if (rank == 2) result = at::max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil_mode);
  if (rank == 3) result = at::max_pool3d_with_indices(x, kernel, stride, padding, dilation, ceil_mode);
  return {std::get<0>(result).contiguous(), std::get<1>(result).to(at::kLong).contiguous()};
}

std::vector<at::Tensor> run_avg_pool(int rank, const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& x = inputs.at(0);
  std::vector<int64_t> kernel = per_axis(rank, params.get_int("kernel"));
  std::vector<int64_t> stride = per_axis(rank, params.get_int("stride"));
  std::vector<int64_t> padding = per_axis(rank, params.get_int("padding"));
  bool ceil_mode = params.get_bool("ceil_mode");
  bool count_include_pad = params.get_bool("count_include_pad");
  at::Tensor y;
  if (rank == 1) y = at::avg_pool1d(x, kernel, stride, padding, ceil_mode, count_include_pad);
  if (rank == 2) y = at::avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad);
  if (rank == 3) y = at::avg_pool3d(x, kernel, stride, padding, ceil_mode, count_include_pad);
  return {y.contiguous()};
}

}  // namespace

void add_pool_ops(EagerOpTable& table) {
  for (int rank = 1; rank <= 3; ++rank) {
    std::string dims = std::to_string(rank) + "d";
    table.add("max_pool" + dims, "at::max_pool" + dims + " (at::max_pool" + dims + "_with_indices for return_indices)",
              [rank](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
                return run_max_pool(rank, params, inputs);
              });
    table.add("avg_pool" + dims, "at::avg_pool" + dims,
              [rank](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
                return run_avg_pool(rank, params, inputs);
              });
  }
}

}  // namespace dragon::bench::torch_eager
