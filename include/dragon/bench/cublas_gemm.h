// The cuBLAS baseline of matmul-like problems (matmul with either operand transposed,
// batch_matmul with or without a broadcast B), loaded with dlopen so nothing links cuBLAS.
// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B first.
// f32 runs in true fp32 (CUBLAS_COMPUTE_32F, no TF32), as torch.matmul does by default;
// f16 and bf16 accumulate in f32.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dragon/ops/op_registry.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::bench {

class CublasGemm {
 public:
  virtual ~CublasGemm() = default;
  virtual std::string name() const = 0;  // "cublasGemmEx (f32, compute 32F)"
  // Launches C = op(A) op(B) on the default stream; `params` are the function's parameters'
  // device buffers in parameter order (A, B, C).
  virtual Status run(const std::vector<runtime::DevicePtr>& params) = 0;
};

// Whether `workload` is matmul-like in a type cuBLAS has a GEMM for (nothing is loaded);
// `why_not` says why not.
bool cublas_applies(const ops::Workload& workload, std::string& why_not);

// A cuBLAS GEMM for `workload`, or nullptr with `why_not` set when its op kind or dtype has
// none or libcublas cannot be loaded.
std::unique_ptr<CublasGemm> make_cublas_gemm(const ops::Workload& workload, std::string& why_not);

}  // namespace dragon::bench
