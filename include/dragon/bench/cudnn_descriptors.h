// cuDNN descriptors made from a plan (bench/cudnn_plan.h): what the baselines run with, and
// what the unit tests hand to cuDNN's own output-size arithmetic where the library loads
// (descriptors need no GPU), so a plan cuDNN would size differently fails without one.
#pragma once

#include <memory>
#include <vector>

#include "dragon/bench/cudnn_api.h"
#include "dragon/bench/cudnn_plan.h"

namespace dragon::bench {

using CudnnDescriptorPtr = std::unique_ptr<CudnnDescriptorOwner>;

struct CudnnConvolutionDescriptors {
  CudnnDescriptorPtr x, y, bias, filter, convolution;  // bias only with the plan's
};

struct CudnnPoolingDescriptors {
  CudnnDescriptorPtr x, y, pooling;
};

// The descriptors, each set from the plan, or the first call cuDNN refused. The
// convolution's math type is the plan's until an algorithm is chosen.
Expected<CudnnConvolutionDescriptors> make_convolution_descriptors(const CudnnConvolutionPlan& plan);
Expected<CudnnPoolingDescriptors> make_pooling_descriptors(const CudnnPoolingPlan& plan);

// cuDNN's output dims for them: the forward convolution of X (of Y's shape, for a transposed
// plan, which must give X's), and the pooling of X.
Expected<std::vector<int>> cudnn_forward_output_dims(const CudnnConvolutionPlan& plan,
                                                              const CudnnConvolutionDescriptors& descriptors);
Expected<std::vector<int>> cudnn_pooling_output_dims(const CudnnPoolingPlan& plan,
                                                              const CudnnPoolingDescriptors& descriptors);

}  // namespace dragon::bench
