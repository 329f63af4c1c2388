// Scans along one axis: cumulative sum (inclusive or exclusive, forward or reversed),
// masked cumulative sum and cumulative product (KernelBench level 1, 89-93). Each is a
// real scan with an ordered axis and linear work, never a reduction per element.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// The `dim` argument as an axis in [0, rank); negative values count from the end, like torch.
int scan_axis(const OpArgs& args, int rank) {
  int64_t dim = args.get_int("dim");
  args.require(dim >= -rank && dim < rank, "dim",
               fmt::format("{} is out of range for a tensor of rank {} (valid: {} to {})", dim, rank, -rank, rank - 1));
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

// The indices `i` moved by `shift` along `axis`.
std::vector<Expr> shifted(const IndexVars& i, int axis, int64_t shift) {
  std::vector<Expr> at(i.begin(), i.end());
  if (shift != 0) at[axis] = at[axis] + shift;
  return at;
}

// Name of the scan stage: "Y" when it is the result, "Y_acc" when a cast to a 16-bit
// type follows (the output keeps its name whatever the type).
std::string scan_name(DataType dtype) { return opmath_type(dtype) == dtype ? "Y" : "Y_acc"; }

// The scan `y` rounded to `dtype` as the stage "Y", when its type differs.
Tensor cast_result(FunctionBuilder& fb, const Tensor& y, DataType dtype) {
  if (y.dtype() == dtype) return y;
  return fb.compute("Y", y.shape(),
                    [&](const IndexVars& i) { return ir::cast(dtype, y(std::vector<Expr>(i.begin(), i.end()))); });
}

// Y[k] = X[k] + Y[k-1] along the axis (X[k] + Y[k+1] reversed); exclusive scans start
// from 0 and add the element before k instead of X[k], which is KernelBench 92's
// cat(zeros, cumsum(x[..., :n-1])) with the same shape as X.
ir::PrimFunc build_cumsum(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  int axis = scan_axis(args, static_cast<int>(shape.size()));
  bool reverse = args.get_bool("reverse"), exclusive = args.get_bool("exclusive");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);
  // Offset of the element an exclusive scan adds at position k: the one before in scan order.
  int64_t lag = exclusive ? (reverse ? 1 : -1) : 0;

  FunctionBuilder fb("cumsum");
  Tensor x = fb.input("X", dtype, shape);
  Tensor y = fb.scan(
      scan_name(dtype), shape, axis, reverse,
      [&](const IndexVars& i) { return exclusive ? ir::make_zero(acc) : ir::cast(acc, x(shifted(i, axis, 0))); },
      [&](const IndexVars& i, Expr previous) { return previous + ir::cast(acc, x(shifted(i, axis, lag))); });
  return fb.build({cast_result(fb, y, dtype)});
}

// torch.cumsum(x * mask, dim): the product is its own stage (as in the PyTorch program),
// so x * 0 stays NaN for a non-finite x, as torch gives.
ir::PrimFunc build_masked_cumsum(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  int axis = scan_axis(args, static_cast<int>(shape.size()));
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("masked_cumsum");
  Tensor x = fb.input("X", dtype, shape);
  Tensor mask = fb.input("mask", DataType::boolean(), shape);
  Tensor masked = fb.compute("masked", shape, [&](const IndexVars& i) {
    std::vector<Expr> at(i.begin(), i.end());
    return x(at) * ir::cast(dtype, mask(at));
  });
  Tensor y = fb.scan(
      scan_name(dtype), shape, axis, /*reverse=*/false,
      [&](const IndexVars& i) { return ir::cast(acc, masked(shifted(i, axis, 0))); },
      [&](const IndexVars& i, Expr previous) { return previous + ir::cast(acc, masked(shifted(i, axis, 0))); });
  return fb.build({cast_result(fb, y, dtype)});
}

ir::PrimFunc build_cumprod(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  int axis = scan_axis(args, static_cast<int>(shape.size()));
  bool reverse = args.get_bool("reverse");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("cumprod");
  Tensor x = fb.input("X", dtype, shape);
  Tensor y = fb.scan(
      scan_name(dtype), shape, axis, reverse, [&](const IndexVars& i) { return ir::cast(acc, x(shifted(i, axis, 0))); },
      [&](const IndexVars& i, Expr previous) { return previous * ir::cast(acc, x(shifted(i, axis, 0))); });
  return fb.build({cast_result(fb, y, dtype)});
}

// Parameters every scan shares: the input shape, the axis and the element type.
std::vector<OpParam> scan_params(std::vector<OpParam> extra) {
  std::vector<OpParam> params = {
      shape_param("shape", std::vector<int64_t>{64, 1024}, "shape of X and Y"),
      int_param("dim", 1, "axis to scan along; negative counts from the end", /*min_value=*/-64),
  };
  params.insert(params.end(), extra.begin(), extra.end());
  params.push_back(dtype_param("dtype", "f32", "element type of X and Y (16-bit types accumulate in f32)"));
  return params;
}

}  // namespace

void register_scan_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "cumsum",
      "scan",
      "Y = torch.cumsum(X, dim); reverse sums from the end, exclusive leaves out the element itself "
      "(KernelBench 89, 91, 92)",
      scan_params({bool_param("reverse", false, "sum from the last element: cumsum(X.flip(dim)).flip(dim)"),
                   bool_param("exclusive", false, "Y[k] sums the elements before k (Y[0] = 0)")}),
      build_cumsum,
  });
  registry.add(OpKind{
      "masked_cumsum",
      "scan",
      "Y = torch.cumsum(X * mask, dim) with a bool mask of X's shape (KernelBench 93)",
      scan_params({}),
      build_masked_cumsum,
  });
  registry.add(OpKind{
      "cumprod",
      "scan",
      "Y = torch.cumprod(X, dim); reverse multiplies from the end (KernelBench 90)",
      scan_params({bool_param("reverse", false, "multiply from the last element: cumprod(X.flip(dim)).flip(dim)")}),
      build_cumprod,
  });
}

}  // namespace dragon::ops
