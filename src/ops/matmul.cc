// Matrix products: plain and transposed matmul (KernelBench level 1 matmul family).
#include "dragon/ops/families.h"
#include "dragon/ops/te.h"

namespace dragon::ops {
namespace {

// Accumulation type of a product of `t` values: f32 for the 16-bit floats (what cuBLAS
// and torch do), else t itself.
DataType accumulator_type(DataType t) { return t.bits() == 16 ? DataType::f32() : t; }

ir::PrimFunc build_matmul(const OpArgs& args) {
  int64_t m = args.get_int("m"), n = args.get_int("n"), k = args.get_int("k");
  bool trans_a = args.get_bool("trans_a"), trans_b = args.get_bool("trans_b");
  DataType dtype = args.get_dtype("dtype");
  DataType acc = accumulator_type(dtype);

  FunctionBuilder fb("matmul");
  Tensor a = fb.input("A", dtype, trans_a ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k});
  Tensor b = fb.input("B", dtype, trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
  Tensor c = fb.reduce("C", {m, n}, {k}, acc, Reducer::sum(), [&](const IndexVars& i, const IndexVars& r) {
    Expr x = trans_a ? a(r[0], i[0]) : a(i[0], r[0]);
    Expr y = trans_b ? b(i[1], r[0]) : b(r[0], i[1]);
    return ir::cast(acc, x) * ir::cast(acc, y);
  });
  if (acc != dtype) {
    c = fb.compute("C_cast", {m, n}, [&](const IndexVars& i) { return ir::cast(dtype, c(i[0], i[1])); });
  }
  return fb.build({c});
}

}  // namespace

void register_matmul_ops(OpRegistry& registry) {
  registry.add(OpKind{
      "matmul",
      "matmul",
      "C[m,n] = sum_k A[m,k] B[k,n], optionally with A or B transposed (KernelBench 1, 2, 6-8, 16-18)",
      {int_param("m", 256, "rows of C"), int_param("n", 256, "columns of C"), int_param("k", 256, "reduction length"),
       bool_param("trans_a", false, "A is stored k x m"), bool_param("trans_b", false, "B is stored n x k"),
       dtype_param("dtype", "f32", "element type of A, B and C")},
      build_matmul,
  });
}

}  // namespace dragon::ops
