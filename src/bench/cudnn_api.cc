#include "dragon/bench/cudnn_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace dragon::bench {
namespace {

// Resolves `symbol` into `slot`, recording the first missing one in `missing`.
template <typename Fn>
void resolve(void* library, const char* symbol, Fn& slot, std::string& missing) {
  slot = reinterpret_cast<Fn>(::dlsym(library, symbol));
  if (!slot && missing.empty()) missing = symbol;
}

CudnnApi load_cudnn() {
  CudnnApi api;
  std::vector<std::string> candidates;
  // The lead's machines have cuDNN only as PyTorch's pip package, outside the loader's path.
  if (const char* path = std::getenv("DRAGON_CUDNN_LIBRARY"); path && *path) candidates.emplace_back(path);
  candidates.emplace_back("libcudnn.so.9");
  candidates.emplace_back("libcudnn.so");
  void* library = nullptr;
  std::string errors;
  for (const std::string& name : candidates) {
    if ((library = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      api.library = name;
      break;
    }
    const char* error = ::dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(error ? error : name);
  }
  if (!library) {
    api.error = "cannot load cuDNN (set DRAGON_CUDNN_LIBRARY to libcudnn.so.9's path): " + errors;
    return api;
  }
  std::string missing;
  resolve(library, "cudnnGetVersion", api.get_version, missing);
  resolve(library, "cudnnGetErrorString", api.get_error_string, missing);
  resolve(library, "cudnnCreate", api.create, missing);
  resolve(library, "cudnnDestroy", api.destroy, missing);
  resolve(library, "cudnnCreateTensorDescriptor", api.create_tensor, missing);
  resolve(library, "cudnnSetTensorNdDescriptor", api.set_tensor_nd, missing);
  resolve(library, "cudnnDestroyTensorDescriptor", api.destroy_tensor, missing);
  resolve(library, "cudnnCreateFilterDescriptor", api.create_filter, missing);
  resolve(library, "cudnnSetFilterNdDescriptor", api.set_filter_nd, missing);
  resolve(library, "cudnnDestroyFilterDescriptor", api.destroy_filter, missing);
  resolve(library, "cudnnCreateConvolutionDescriptor", api.create_convolution, missing);
  resolve(library, "cudnnSetConvolutionNdDescriptor", api.set_convolution_nd, missing);
  resolve(library, "cudnnSetConvolutionGroupCount", api.set_convolution_groups, missing);
  resolve(library, "cudnnSetConvolutionMathType", api.set_convolution_math, missing);
  resolve(library, "cudnnDestroyConvolutionDescriptor", api.destroy_convolution, missing);
  resolve(library, "cudnnGetConvolutionNdForwardOutputDim", api.get_convolution_output_dims, missing);
  resolve(library, "cudnnGetConvolutionForwardWorkspaceSize", api.get_forward_workspace, missing);
  resolve(library, "cudnnGetConvolutionBackwardDataWorkspaceSize", api.get_backward_data_workspace, missing);
  resolve(library, "cudnnFindConvolutionForwardAlgorithm", api.find_forward, missing);
  resolve(library, "cudnnGetConvolutionForwardAlgorithm_v7", api.get_forward_v7, missing);
  resolve(library, "cudnnFindConvolutionBackwardDataAlgorithm", api.find_backward_data, missing);
  resolve(library, "cudnnGetConvolutionBackwardDataAlgorithm_v7", api.get_backward_data_v7, missing);
  resolve(library, "cudnnConvolutionForward", api.convolution_forward, missing);
  resolve(library, "cudnnConvolutionBackwardData", api.convolution_backward_data, missing);
  resolve(library, "cudnnAddTensor", api.add_tensor, missing);
  resolve(library, "cudnnCreatePoolingDescriptor", api.create_pooling, missing);
  resolve(library, "cudnnSetPoolingNdDescriptor", api.set_pooling_nd, missing);
  resolve(library, "cudnnDestroyPoolingDescriptor", api.destroy_pooling, missing);
  resolve(library, "cudnnGetPoolingNdForwardOutputDim", api.get_pooling_output_dims, missing);
  resolve(library, "cudnnPoolingForward", api.pooling_forward, missing);
  resolve(library, "cudnnSoftmaxForward", api.softmax_forward, missing);
  if (!missing.empty()) {
    api.error = api.library + " lacks " + missing + " (the cuDNN baseline needs cuDNN 9's legacy API)";
    return api;
  }
  api.version = api.get_version();
  if (api.version < 90000) api.error = api.library + " is cuDNN " + std::to_string(api.version) + ", not 9";
  return api;
}

}  // namespace

const CudnnApi& cudnn_api() {
  static const CudnnApi api = load_cudnn();
  return api;
}

Status cudnn_status(int status, const char* call) {
  if (status == 0) return {};
  return DRAGON_RUNTIME_FAILURE(call, cudnn_api().get_error_string(status), "");
}

CudnnHandleOwner::CudnnHandleOwner() {
  if (!cudnn_api().error.empty()) {
    created_ = DRAGON_RUNTIME_FAILURE("dlopen", cudnn_api().error, "");
    return;
  }
  created_ = cudnn_status(cudnn_api().create(&handle_), "cudnnCreate");
  if (!created_.ok()) handle_ = nullptr;
}

CudnnHandleOwner::~CudnnHandleOwner() {
  if (handle_) cudnn_api().destroy(handle_);
}

CudnnDescriptorOwner::CudnnDescriptorOwner(int (*create)(CudnnDescriptor*), Destroy destroy) : destroy_(destroy) {
  if (create(&descriptor_) != 0) descriptor_ = nullptr;
}

CudnnDescriptorOwner::~CudnnDescriptorOwner() {
  if (descriptor_) destroy_(descriptor_);
}

Expected<std::unique_ptr<CudnnDescriptorOwner>> make_tensor_descriptor(const CudnnTensorDims& dims,
                                                                                CudnnDataType type) {
  const CudnnApi& api = cudnn_api();
  auto owner = std::make_unique<CudnnDescriptorOwner>(api.create_tensor, api.destroy_tensor);
  if (!owner->get()) return DRAGON_RUNTIME_FAILURE("cudnnCreateTensorDescriptor", "no descriptor", "");
  Status set = cudnn_status(api.set_tensor_nd(owner->get(), static_cast<int>(type),
                                                       static_cast<int>(dims.dims.size()), dims.dims.data(),
                                                       dims.strides.data()),
                                     "cudnnSetTensorNdDescriptor");
  if (!set.ok()) return set.error();
  return owner;
}

}  // namespace dragon::bench
