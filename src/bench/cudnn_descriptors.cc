#include "dragon/bench/cudnn_descriptors.h"

namespace dragon::bench {
namespace {

Status library_loaded() {
  if (!cudnn_api().error.empty()) return DRAGON_RUNTIME_FAILURE("dlopen", cudnn_api().error, "");
  return {};
}

// The descriptors of X and Y, both in the plan's data type.
Status make_x_and_y(const CudnnTensorDims& x, const CudnnTensorDims& y, CudnnDataType type,
                             CudnnDescriptorPtr& x_descriptor, CudnnDescriptorPtr& y_descriptor) {
  auto made_x = make_tensor_descriptor(x, type);
  if (!made_x.ok()) return made_x.error();
  auto made_y = make_tensor_descriptor(y, type);
  if (!made_y.ok()) return made_y.error();
  x_descriptor = std::move(made_x.value());
  y_descriptor = std::move(made_y.value());
  return {};
}

}  // namespace

Expected<CudnnConvolutionDescriptors> make_convolution_descriptors(const CudnnConvolutionPlan& plan) {
  if (Status loaded = library_loaded(); !loaded.ok()) return loaded.error();
  const CudnnApi& api = cudnn_api();
  CudnnConvolutionDescriptors d;
  if (Status s = make_x_and_y(plan.x, plan.y, plan.data_type, d.x, d.y); !s.ok()) return s.error();
  if (plan.bias) {
    auto bias = make_tensor_descriptor(*plan.bias, plan.data_type);
    if (!bias.ok()) return bias.error();
    d.bias = std::move(bias.value());
  }
  d.filter = std::make_unique<CudnnDescriptorOwner>(api.create_filter, api.destroy_filter);
  Status s = cudnn_status(api.set_filter_nd(d.filter->get(), static_cast<int>(plan.data_type),
                                                     kCudnnTensorNchw, static_cast<int>(plan.filter.size()),
                                                     plan.filter.data()),
                                   "cudnnSetFilterNdDescriptor");
  if (!s.ok()) return s.error();
  d.convolution = std::make_unique<CudnnDescriptorOwner>(api.create_convolution, api.destroy_convolution);
  s = cudnn_status(api.set_convolution_nd(d.convolution->get(), static_cast<int>(plan.padding.size()),
                                          plan.padding.data(), plan.stride.data(), plan.dilation.data(),
                                          kCudnnCrossCorrelation, static_cast<int>(plan.compute_type)),
                   "cudnnSetConvolutionNdDescriptor");
  if (!s.ok()) return s.error();
  s = cudnn_status(api.set_convolution_groups(d.convolution->get(), plan.groups), "cudnnSetConvolutionGroupCount");
  if (!s.ok()) return s.error();
  s = cudnn_status(api.set_convolution_math(d.convolution->get(), static_cast<int>(plan.math_type)),
                   "cudnnSetConvolutionMathType");
  if (!s.ok()) return s.error();
  return d;
}

Expected<CudnnPoolingDescriptors> make_pooling_descriptors(const CudnnPoolingPlan& plan) {
  if (Status loaded = library_loaded(); !loaded.ok()) return loaded.error();
  const CudnnApi& api = cudnn_api();
  CudnnPoolingDescriptors d;
  if (Status s = make_x_and_y(plan.x, plan.y, plan.data_type, d.x, d.y); !s.ok()) return s.error();
  d.pooling = std::make_unique<CudnnDescriptorOwner>(api.create_pooling, api.destroy_pooling);
  // NaN propagates, as torch's max pooling does.
  Status s = cudnn_status(
      api.set_pooling_nd(d.pooling->get(), static_cast<int>(plan.mode), kCudnnPropagateNan,
                         static_cast<int>(plan.window.size()), plan.window.data(), plan.padding.data(),
                         plan.stride.data()),
      "cudnnSetPoolingNdDescriptor");
  if (!s.ok()) return s.error();
  return d;
}

Expected<std::vector<int>> cudnn_forward_output_dims(const CudnnConvolutionPlan& plan,
                                                              const CudnnConvolutionDescriptors& descriptors) {
  std::vector<int> dims(plan.x.dims.size());
  CudnnDescriptor input = plan.transposed ? descriptors.y->get() : descriptors.x->get();
  Status s = cudnn_status(
      cudnn_api().get_convolution_output_dims(descriptors.convolution->get(), input, descriptors.filter->get(),
                                              static_cast<int>(dims.size()), dims.data()),
      "cudnnGetConvolutionNdForwardOutputDim");
  if (!s.ok()) return s.error();
  return dims;
}

Expected<std::vector<int>> cudnn_pooling_output_dims(const CudnnPoolingPlan& plan,
                                                              const CudnnPoolingDescriptors& descriptors) {
  std::vector<int> dims(plan.x.dims.size());
  Status s = cudnn_status(
      cudnn_api().get_pooling_output_dims(descriptors.pooling->get(), descriptors.x->get(),
                                          static_cast<int>(dims.size()), dims.data()),
      "cudnnGetPoolingNdForwardOutputDim");
  if (!s.ok()) return s.error();
  return dims;
}

}  // namespace dragon::bench
