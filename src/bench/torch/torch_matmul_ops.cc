// Eager (ATen) computations of the matmul op family; see eager_op_table.h.
#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

// Our transposed operands are stored with the two matrix axes swapped; torch reads them
// through a transposed view, as `A.T @ B` in a KernelBench reference does.
at::Tensor maybe_transposed(const at::Tensor& t, bool transposed) { return transposed ? t.transpose(-2, -1) : t; }

std::vector<at::Tensor> run_matmul(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  at::Tensor a = maybe_transposed(inputs.at(0), params.get_bool("trans_a"));
  at::Tensor b = maybe_transposed(inputs.at(1), params.get_bool("trans_b"));
  return {at::matmul(a, b).contiguous()};
}

// torch.matmul batches over the leading axes of A; with broadcast_b, B is one matrix and
// torch.matmul broadcasts it (KernelBench 10, 11).
std::vector<at::Tensor> run_batch_matmul(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  at::Tensor a = maybe_transposed(inputs.at(0), params.get_bool("trans_a"));
  at::Tensor b = maybe_transposed(inputs.at(1), params.get_bool("trans_b"));
  return {at::matmul(a, b).contiguous()};
}

std::vector<at::Tensor> run_triangular_matmul(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  at::Tensor product = at::matmul(inputs.at(0), inputs.at(1));
  bool upper = params.get_choice("triangle") == "upper";
  return {(upper ? at::triu(product) : at::tril(product)).contiguous()};
}

// KernelBench 12 runs torch.diag(A) @ B: the m x m diagonal matrix is materialised and
// multiplied, so that is the baseline (every sum has one non-zero term, so the values
// equal A[i] * B[i, j]).
std::vector<at::Tensor> run_diag_matmul(const EagerOpParams&, const std::vector<at::Tensor>& inputs) {
  return {at::matmul(at::diag(inputs.at(0)), inputs.at(1)).contiguous()};
}

std::vector<at::Tensor> run_mul_scalar(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  return {at::mul(inputs.at(0), at::Scalar(params.get_float("scalar"))).contiguous()};
}

}  // namespace

void add_matmul_ops(EagerOpTable& table) {
  table.add("matmul", "at::matmul (cuBLAS on CUDA)", run_matmul);
  table.add("batch_matmul", "at::matmul, batched (cuBLAS strided-batched on CUDA)", run_batch_matmul);
  table.add("triangular_matmul", "at::matmul then at::triu / at::tril", run_triangular_matmul);
  table.add("diag_matmul", "at::matmul(at::diag(A), B) (KernelBench 12's torch.diag(A) @ B)", run_diag_matmul);
  table.add("mul_scalar", "at::mul(tensor, scalar)", run_mul_scalar);
}

}  // namespace dragon::bench::torch_eager
