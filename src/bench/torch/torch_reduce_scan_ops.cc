// Eager (ATen) computations of the reduce and scan op families; see eager_op_table.h.
// Reductions take our axis and keepdim as torch's dim and keepdim; scans our dim. The
// reversed and exclusive scans are KernelBench's compositions (flip, cat) around cumsum.
#include <cstdint>
#include <tuple>
#include <vector>

#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

struct AxisArgs {
  int64_t axis;
  bool keepdim;
};
AxisArgs axis_args(const EagerOpParams& params) { return {params.get_int("axis"), params.get_bool("keepdim")}; }

std::vector<at::Tensor> sum(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  auto [axis, keepdim] = axis_args(params);
  std::vector<int64_t> dims{axis};
  return {at::sum(inputs.at(0), at::IntArrayRef(dims), keepdim)};
}

std::vector<at::Tensor> mean(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  auto [axis, keepdim] = axis_args(params);
  std::vector<int64_t> dims{axis};
  return {at::mean(inputs.at(0), at::IntArrayRef(dims), keepdim)};
}

// torch.max(x, dim)[0]: the values of the (values, indices) pair.
std::vector<at::Tensor> max(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  auto [axis, keepdim] = axis_args(params);
  return {std::get<0>(at::max(inputs.at(0), axis, keepdim))};
}

std::vector<at::Tensor> min(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  auto [axis, keepdim] = axis_args(params);
  return {std::get<0>(at::min(inputs.at(0), axis, keepdim))};
}

// i64 indices, the first extremum on ties, as ours.
std::vector<at::Tensor> argmax(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  auto [axis, keepdim] = axis_args(params);
  return {at::argmax(inputs.at(0), axis, keepdim)};
}

std::vector<at::Tensor> argmin(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  auto [axis, keepdim] = axis_args(params);
  return {at::argmin(inputs.at(0), axis, keepdim)};
}

// x shifted one place along `dim`: a zero slice first, the last element dropped
// (KernelBench 92's exclusive prefix: cat(zeros, x[..., :n-1])).
at::Tensor shift_in_zero(const at::Tensor& x, int64_t dim) {
  int64_t length = x.size(dim);
  at::Tensor first = at::zeros_like(x.narrow(dim, 0, 1));
  return at::cat({first, x.narrow(dim, 0, length - 1)}, dim);
}

// reverse: cumsum(x.flip(dim), dim).flip(dim) (KernelBench 91); exclusive leaves out
// the element itself, in scan order.
std::vector<at::Tensor> cumsum(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  int64_t dim = params.get_int("dim");
  bool reverse = params.get_bool("reverse"), exclusive = params.get_bool("exclusive");
  at::Tensor x = reverse ? inputs.at(0).flip({dim}) : inputs.at(0);
  if (exclusive) x = shift_in_zero(x, dim);
  at::Tensor y = at::cumsum(x, dim);
  return {reverse ? y.flip({dim}) : y};
}

// KernelBench 93: torch.cumsum(x * mask, dim); the bool mask promotes to x's type.
std::vector<at::Tensor> masked_cumsum(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  return {at::cumsum(inputs.at(0) * inputs.at(1), params.get_int("dim"))};
}

std::vector<at::Tensor> cumprod(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  int64_t dim = params.get_int("dim");
  if (!params.get_bool("reverse")) return {at::cumprod(inputs.at(0), dim)};
  return {at::cumprod(inputs.at(0).flip({dim}), dim).flip({dim})};
}

}  // namespace

void add_reduce_scan_ops(EagerOpTable& table) {
  table.add("sum", "at::sum", sum);
  table.add("mean", "at::mean", mean);
  table.add("max", "at::max (values)", max);
  table.add("argmax", "at::argmax", argmax);
  table.add("argmin", "at::argmin", argmin);
  table.add("min", "at::min (values)", min);
  table.add("cumsum", "at::cumsum", cumsum);
  table.add("masked_cumsum", "at::cumsum(x * mask)", masked_cumsum);
  table.add("cumprod", "at::cumprod", cumprod);
}

}  // namespace dragon::bench::torch_eager
