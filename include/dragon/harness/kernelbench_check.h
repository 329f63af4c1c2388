// KernelBench's correctness check as its eval.py runs it (REFERENCE-kernelbench.md 1.3):
// torch.allclose(reference, candidate, atol=tol, rtol=tol) on torch.rand inputs. Modelled
// only to show what that check accepts (problem_audit.h); never used to judge a candidate.
#pragma once

#include "dragon/ir/dtype.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::harness {

// KernelBench at HEAD: 1e-4 for fp32 (and f64), 1e-2 for fp16 and bf16 (from torchbench).
double kernelbench_head_tolerance(ir::DataType dtype);
// The KernelBench paper's v0 and v0.1 runs: 1e-2 for every type.
inline constexpr double kKernelBenchPaperTolerance = 1e-2;

// torch.allclose(reference, candidate, atol, rtol, equal_nan=False): every element has
// |reference - candidate| <= atol + rtol * |candidate|; NaN is never close, an Inf only
// to the same Inf.
bool kernelbench_allclose(const tensor::HostTensor& reference, const tensor::HostTensor& candidate, double atol,
                          double rtol);

}  // namespace dragon::harness
