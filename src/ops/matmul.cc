// Matrix products of KernelBench level 1 (ids 1-18): plain, transposed, batched and
// broadcast matmul, triangular-masked matmul, diag(a) @ B and matrix times scalar.
// Builders only: no schedules, no special cases for structured inputs.
#include <string>
#include <vector>

#include "dragon/ops/families.h"
#include "dragon/ops/te.h"
#include "opmath.h"

namespace dragon::ops {
namespace {

// Name of the product stage: "C" when it is the result, "C_acc" when a cast follows.
std::string product_name(DataType dtype) { return opmath_type(dtype) == dtype ? "C" : "C_acc"; }

// The product `c` cast to `dtype` as the stage "C", when its type differs.
Tensor cast_result(FunctionBuilder& fb, const Tensor& c, DataType dtype) {
  if (c.dtype() == dtype) return c;
  return fb.compute("C", c.shape(),
                    [&](const IndexVars& i) { return ir::cast(dtype, c(std::vector<Expr>(i.begin(), i.end()))); });
}

ir::PrimFunc build_matmul(const OpArgs& args) {
  int64_t m = args.get_int("m"), n = args.get_int("n"), k = args.get_int("k");
  bool trans_a = args.get_bool("trans_a"), trans_b = args.get_bool("trans_b");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("matmul");
  Tensor a = fb.input("A", dtype, trans_a ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k});
  Tensor b = fb.input("B", dtype, trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  auto product = [&](const IndexVars& i, const IndexVars& r) {
    Expr x = trans_a ? a(r[0], i[0]) : a(i[0], r[0]);
    Expr y = trans_b ? b(i[1], r[0]) : b(r[0], i[1]);
    return ir::cast(acc, x) * ir::cast(acc, y);
  };
  Tensor c = fb.reduce(product_name(dtype), {m, n}, {k}, acc, Reducer::sum(), product);
  return fb.build({cast_result(fb, c, dtype)});
}

// C[batch..., m, n] = sum_k A[batch..., m, k] B[batch..., k, n]: torch.bmm for one batch
// axis, torch.matmul's batching for several; with broadcast_b, B is one k x n matrix
// shared by every batch (torch.matmul of an N-d tensor and a matrix, or the einsum
// "bijl,lk->bijk").
ir::PrimFunc build_batch_matmul(const OpArgs& args) {
  const std::vector<int64_t>& batch = args.get_shape("batch");
  int64_t m = args.get_int("m"), n = args.get_int("n"), k = args.get_int("k");
  bool trans_a = args.get_bool("trans_a"), trans_b = args.get_bool("trans_b");
  bool broadcast_b = args.get_bool("broadcast_b");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);
  const size_t nb = batch.size();

  auto with_batch = [&](std::vector<int64_t> matrix) {
    std::vector<int64_t> shape = batch;
    shape.insert(shape.end(), matrix.begin(), matrix.end());
    return shape;
  };
  std::vector<int64_t> a_matrix = trans_a ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  std::vector<int64_t> b_matrix = trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};

  FunctionBuilder fb("batch_matmul");
  Tensor a = fb.input("A", dtype, with_batch(a_matrix));
  Tensor b = fb.input("B", dtype, broadcast_b ? b_matrix : with_batch(b_matrix));
  auto product = [&](const IndexVars& i, const IndexVars& r) {
    std::vector<Expr> a_index(i.begin(), i.begin() + nb);
    std::vector<Expr> b_index = broadcast_b ? std::vector<Expr>{} : a_index;
    Expr row = i[nb], col = i[nb + 1];
    if (trans_a) {
      a_index.insert(a_index.end(), {r[0], row});
    } else {
      a_index.insert(a_index.end(), {row, r[0]});
    }
    if (trans_b) {
      b_index.insert(b_index.end(), {col, r[0]});
    } else {
      b_index.insert(b_index.end(), {r[0], col});
    }
    return ir::cast(acc, a(a_index)) * ir::cast(acc, b(b_index));
  };
  Tensor c = fb.reduce(product_name(dtype), with_batch({m, n}), {k}, acc, Reducer::sum(), product);
  return fb.build({cast_result(fb, c, dtype)});
}

// torch.triu(A @ B) or torch.tril(A @ B): the full product, then the other triangle set
// to zero. The inputs are general matrices; nothing assumes they are triangular.
ir::PrimFunc build_triangular_matmul(const OpArgs& args) {
  int64_t m = args.get_int("m"), n = args.get_int("n"), k = args.get_int("k");
  bool upper = args.get_choice("triangle") == "upper";
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("triangular_matmul");
  Tensor a = fb.input("A", dtype, {m, k});
  Tensor b = fb.input("B", dtype, {k, n});
  Tensor product = fb.reduce("P", {m, n}, {k}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
    return ir::cast(acc, a(i[0], r[0])) * ir::cast(acc, b(r[0], i[1]));
  });
  Tensor c = fb.compute("C", {m, n}, [&](const IndexVars& i) {
    Expr keep = upper ? i[1] >= i[0] : i[1] <= i[0];
    return ir::cast(dtype, ir::select(keep, product(i[0], i[1]), ir::make_zero(acc)));
  });
  return fb.build({c});
}

// diag(a) @ B without the n x n matrix: C[i, j] = a[i] * B[i, j] (torch's
// A.unsqueeze(1) * B). One rounding per element, so no wider accumulator is needed.
ir::PrimFunc build_diag_matmul(const OpArgs& args) {
  int64_t m = args.get_int("m"), n = args.get_int("n");
  DataType dtype = args.get_dtype("dtype");

  FunctionBuilder fb("diag_matmul");
  Tensor a = fb.input("A", dtype, {m});
  Tensor b = fb.input("B", dtype, {m, n});
  Tensor c = fb.compute("C", {m, n}, [&](const IndexVars& i) { return a(i[0]) * b(i[0], i[1]); });
  return fb.build({c});
}

// C = A * s for a Python float s. torch rounds s to the computation type (f32 for
// f16/bf16 tensors, whose product is then rounded back), so the constant is made there.
ir::PrimFunc build_mul_scalar(const OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  double scalar = args.get_float("scalar");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = opmath_type(dtype);

  FunctionBuilder fb("mul_scalar");
  Tensor a = fb.input("A", dtype, shape);
  Tensor c = fb.compute("C", shape, [&](const IndexVars& i) {
    Expr x = a(std::vector<Expr>(i.begin(), i.end()));
    return ir::cast(dtype, ir::cast(acc, x) * ir::make_const(acc, scalar));
  });
  return fb.build({c});
}

}  // namespace

void register_matmul_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "matmul",
      "matmul",
      "C[m,n] = sum_k A[m,k] B[k,n], optionally with A or B transposed; n=1 is a matrix-vector product "
      "(KernelBench 1, 2, 4, 6-9, 13, 16-18)",
      {int_param("m", 64, "rows of C"), int_param("n", 64, "columns of C"), int_param("k", 64, "reduction length"),
       bool_param("trans_a", false, "A is stored k x m"), bool_param("trans_b", false, "B is stored n x k"),
       dtype_param("dtype", "f32", "element type of A, B and C")},
      build_matmul,
  });
  registry.add(OpKind{
      "batch_matmul",
      "matmul",
      "C[batch...,m,n] = sum_k A[batch...,m,k] B[batch...,k,n] (torch.bmm / torch.matmul batching); with "
      "broadcast_b, B is one k x n matrix for every batch (KernelBench 3, 10, 11)",
      {shape_param("batch", std::vector<int64_t>{4}, "batch axes of A and C, e.g. 8x256"),
       int_param("m", 32, "rows of each C matrix"), int_param("n", 32, "columns of each C matrix"),
       int_param("k", 32, "reduction length"), bool_param("trans_a", false, "each A matrix is stored k x m"),
       bool_param("trans_b", false, "each B matrix is stored n x k"),
       bool_param("broadcast_b", false, "B has no batch axes: one matrix shared by every batch"),
       dtype_param("dtype", "f32", "element type of A, B and C")},
      build_batch_matmul,
  });
  registry.add(OpKind{
      "triangular_matmul",
      "matmul",
      "C = torch.triu(A @ B) or torch.tril(A @ B), A m x k, B k x n (KernelBench 14, 15)",
      {int_param("m", 64, "rows of C"), int_param("n", 64, "columns of C"), int_param("k", 64, "reduction length"),
       choice_param("triangle", "upper", {"upper", "lower"},
                    "which triangle of the product is kept (diagonal included); the other is zero"),
       dtype_param("dtype", "f32", "element type of A, B and C")},
      build_triangular_matmul,
  });
  registry.add(OpKind{
      "diag_matmul",
      "matmul",
      "C[m,n] = diag(A) @ B = A[m] * B[m,n], A a vector of length m (KernelBench 12)",
      {int_param("m", 64, "length of A, rows of B and C"), int_param("n", 64, "columns of B and C"),
       dtype_param("dtype", "f32", "element type of A, B and C")},
      build_diag_matmul,
  });
  registry.add(OpKind{
      "mul_scalar",
      "matmul",
      "C = A * scalar, elementwise over a tensor of any shape (KernelBench 5)",
      {shape_param("shape", std::vector<int64_t>{64, 64}, "shape of A and C"),
       float_param("scalar", 3.14, "the scalar factor"), dtype_param("dtype", "f32", "element type of A and C")},
      build_mul_scalar,
  });
}

}  // namespace dragon::ops
