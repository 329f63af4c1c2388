// Reductions over one axis: sum, mean, max, min, argmax and argmin, with or without
// keepdim (KernelBench level 1, 47-49 and 51-53). Not the norms (norm.cc) nor the scans.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// Where the reduced axis is and what the output looks like.
struct AxisReduction {
  std::vector<int64_t> out_shape;  // the input shape without the axis, or with 1 there (keepdim)
  int axis = 0;
  bool keepdim = false;
  int64_t length = 0;  // extent of the reduced axis

  // The input index of the element at output index `i` and position `k` along the axis.
  std::vector<Expr> input_index(const IndexVars& i, Expr k) const {
    std::vector<Expr> at(i.begin(), i.end());
    if (keepdim) {
      at[axis] = std::move(k);  // the output's coordinate there is always 0
    } else {
      at.insert(at.begin() + axis, std::move(k));
    }
    return at;
  }
};

AxisReduction resolve(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  int rank = static_cast<int>(shape.size());
  int64_t axis = args.get_int("axis");
  args.require(axis >= -rank && axis < rank, "axis",
               fmt::format("{} is out of range for shape {} of rank {} (valid: {} to {})", axis,
                           format_param_value(ParamValue(shape)), rank, -rank, rank - 1));
  AxisReduction red;
  red.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  red.keepdim = args.get_bool("keepdim");
  red.length = shape[red.axis];
  red.out_shape = shape;
  if (red.keepdim) {
    red.out_shape[red.axis] = 1;
  } else {
    red.out_shape.erase(red.out_shape.begin() + red.axis);
  }
  return red;
}

enum class ReduceKind : uint8_t { kSum, kMean, kMax, kMin, kArgMax, kArgMin };

ir::PrimFunc build_reduce(const OpArgs& args, ReduceKind kind, const std::string& name) {
  AxisReduction red = resolve(args);
  DataType dtype = args.get_dtype("dtype");
  FunctionBuilder fb(name);
  Tensor x = fb.input("X", dtype, args.get_shape("shape"));
  auto element = [&](const IndexVars& i, const IndexVars& r) { return x(red.input_index(i, r[0])); };
  auto out_index = [](const IndexVars& i) { return std::vector<Expr>(i.begin(), i.end()); };

  Tensor y;
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kMean: {
      DataType acc = opmath_type(dtype);
      bool mean = kind == ReduceKind::kMean;
      std::string sum_name = mean ? "x_sum" : "sum";
      y = fb.reduce(sum_name, red.out_shape, {red.length}, acc, Reducer::sum(),
                    [&](const IndexVars& i, const IndexVars& r) { return ir::cast(acc, element(i, r)); });
      if (mean) {
        Tensor sum = y;
        double count = static_cast<double>(red.length);
        y = fb.compute("mean", red.out_shape,
                       [&](const IndexVars& i) { return ir::cast(dtype, sum(out_index(i)) / count); });
      } else if (acc != dtype) {
        Tensor sum = y;
        y = fb.compute("sum_cast", red.out_shape,
                       [&](const IndexVars& i) { return ir::cast(dtype, sum(out_index(i))); });
      }
      break;
    }
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      // Exact in any type: no wider accumulator needed.
      y = fb.reduce(name, red.out_shape, {red.length}, dtype,
                    kind == ReduceKind::kMax ? Reducer::maximum() : Reducer::minimum(), element);
      break;
    case ReduceKind::kArgMax:
    case ReduceKind::kArgMin:
      // Ties report the first position, like torch.argmax / argmin.
      y = fb.arg_reduce(name, red.out_shape, {red.length}, kind == ReduceKind::kArgMax, element,
                        [](const IndexVars& r) { return Expr(r[0]); });
      break;
  }
  return fb.build({y});
}

struct ReduceOp {
  const char* name;
  ReduceKind kind;
  const char* summary;
};

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  const ReduceOp ops[] = {
      {"sum", ReduceKind::kSum, "Y = sum of X along axis (KernelBench 47)"},
      {"mean", ReduceKind::kMean, "Y = mean of X along axis (KernelBench 48)"},
      {"max", ReduceKind::kMax, "Y = max of X along axis, torch.max(x, dim)[0] (KernelBench 49)"},
      {"argmax", ReduceKind::kArgMax, "Y = i64 index of the first max of X along axis (KernelBench 51)"},
      {"argmin", ReduceKind::kArgMin, "Y = i64 index of the first min of X along axis (KernelBench 52)"},
      {"min", ReduceKind::kMin, "Y = min of X along axis, torch.min(x, dim)[0] (KernelBench 53)"},
  };
  for (const ReduceOp& op : ops) {
    std::string name = op.name;
    ReduceKind kind = op.kind;
    registry.add(OpKind{
        name,
        "reduce",
        op.summary,
        {shape_param("shape", std::vector<int64_t>{16, 64, 63}, "shape of X"),
         int_param("axis", 1, "axis reduced; negative counts from the end", std::numeric_limits<int64_t>::min()),
         bool_param("keepdim", false, "keep the reduced axis with extent 1, like torch's keepdim"),
         dtype_param("dtype", "f32", "element type of X (and Y, except for the i64 indices of argmax and argmin)")},
        [kind, name](const OpArgs& args) { return build_reduce(args, kind, name); },
    });
  }
}

}  // namespace dragon::ops
