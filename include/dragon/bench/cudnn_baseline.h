// The cuDNN baseline of convolutions (1D/2D/3D; grouped, depthwise, dilated, strided,
// padded; transposed through cudnnConvolutionBackwardData; a bias added by cudnnAddTensor),
// max/avg pooling and softmax/log_softmax, loaded with dlopen (bench/cudnn_api.h) so nothing
// links cuDNN. Which workloads have one, and how our parameters map to cuDNN's, is
// bench/cudnn_plan.h. f32 convolutions run in true fp32 (CUDNN_FMA_MATH, no TF32); 16-bit
// types accumulate in f32 with tensor-op math. A convolution's algorithm is chosen once, at
// construction: the fastest that cudnnFind* measures (the _v7 heuristic's first if Find
// fails), its workspace allocated then and owned by the baseline, so run() times the library
// call alone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dragon/bench/cudnn_plan.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/cuda_driver.h"

namespace dragon::bench {

class CudnnBaseline {
 public:
  virtual ~CudnnBaseline() = default;
  // "cudnnConvolutionForward (f32, FMA math, algo IMPLICIT_PRECOMP_GEMM)"; every name
  // starts with "cudnn" (what reports look baselines up by).
  virtual std::string name() const = 0;
  // Runs on the default stream; `params` are the function's parameters' device buffers in
  // parameter order. A baseline whose setup failed (no library, a descriptor cuDNN
  // rejects, no algorithm) returns that failure here.
  virtual Status run(const std::vector<runtime::DevicePtr>& params) = 0;
};

// The cuDNN baseline of `workload`, or nullptr with `why_not` set when cuDNN has no
// equivalent (plan_cudnn's reasons). Needs a CUDA device: a convolution's algorithm is
// chosen here.
std::unique_ptr<CudnnBaseline> make_cudnn_baseline(const ops::Workload& workload, std::string& why_not);

// The baselines of each plan kind, which make_cudnn_baseline picks from.
std::unique_ptr<CudnnBaseline> make_cudnn_convolution(const CudnnConvolutionPlan& plan);
std::unique_ptr<CudnnBaseline> make_cudnn_pooling(const CudnnPoolingPlan& plan);
std::unique_ptr<CudnnBaseline> make_cudnn_softmax(const CudnnSoftmaxPlan& plan);

}  // namespace dragon::bench
