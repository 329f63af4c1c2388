// The few cuDNN 9 legacy-API entry points the cuDNN baseline calls, loaded with dlopen and
// declared here with plain pointer types, so the build needs no cuDNN headers and nothing
// links the library. The library is DRAGON_CUDNN_LIBRARY (a full path) when set, else
// libcudnn.so.9, else libcudnn.so; its sub-libraries (libcudnn_cnn, libcudnn_ops, ...) load
// from beside it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "dragon/bench/cudnn_plan.h"
#include "dragon/support/expected.h"

namespace dragon::bench {

using CudnnHandle = void*;
using CudnnDescriptor = void*;

// cudnnConvolutionFwdAlgoPerf_t and cudnnConvolutionBwdDataAlgoPerf_t (same layout).
struct CudnnAlgoPerf {
  int algo;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct CudnnApi {
  std::string library;  // the path or name that loaded
  size_t version = 0;   // cudnnGetVersion(): 90100 for 9.1.0
  std::string error;    // why it cannot be used; empty when every entry point resolved

  size_t (*get_version)() = nullptr;
  const char* (*get_error_string)(int) = nullptr;
  int (*create)(CudnnHandle*) = nullptr;
  int (*destroy)(CudnnHandle) = nullptr;
  int (*create_tensor)(CudnnDescriptor*) = nullptr;
  int (*set_tensor_nd)(CudnnDescriptor, int data_type, int rank, const int* dims, const int* strides) = nullptr;
  int (*destroy_tensor)(CudnnDescriptor) = nullptr;
  int (*create_filter)(CudnnDescriptor*) = nullptr;
  int (*set_filter_nd)(CudnnDescriptor, int data_type, int format, int rank, const int* dims) = nullptr;
  int (*destroy_filter)(CudnnDescriptor) = nullptr;
  int (*create_convolution)(CudnnDescriptor*) = nullptr;
  int (*set_convolution_nd)(CudnnDescriptor, int spatial_rank, const int* padding, const int* stride,
                            const int* dilation, int mode, int compute_type) = nullptr;
  int (*set_convolution_groups)(CudnnDescriptor, int groups) = nullptr;
  int (*set_convolution_math)(CudnnDescriptor, int math_type) = nullptr;
  int (*destroy_convolution)(CudnnDescriptor) = nullptr;
  int (*get_convolution_output_dims)(CudnnDescriptor conv, CudnnDescriptor x, CudnnDescriptor w, int rank,
                                     int* dims) = nullptr;
  // Find: runs every algorithm on buffers cuDNN allocates itself; _v7: the heuristic's ranking.
  int (*find_forward)(CudnnHandle, CudnnDescriptor x, CudnnDescriptor w, CudnnDescriptor conv, CudnnDescriptor y,
                      int requested, int* returned, CudnnAlgoPerf* results) = nullptr;
  int (*get_forward_v7)(CudnnHandle, CudnnDescriptor x, CudnnDescriptor w, CudnnDescriptor conv, CudnnDescriptor y,
                        int requested, int* returned, CudnnAlgoPerf* results) = nullptr;
  int (*find_backward_data)(CudnnHandle, CudnnDescriptor w, CudnnDescriptor dy, CudnnDescriptor conv,
                            CudnnDescriptor dx, int requested, int* returned, CudnnAlgoPerf* results) = nullptr;
  int (*get_backward_data_v7)(CudnnHandle, CudnnDescriptor w, CudnnDescriptor dy, CudnnDescriptor conv,
                              CudnnDescriptor dx, int requested, int* returned, CudnnAlgoPerf* results) = nullptr;
  // The workspace an algorithm needs under the descriptor's math type.
  int (*get_forward_workspace)(CudnnHandle, CudnnDescriptor x, CudnnDescriptor w, CudnnDescriptor conv,
                               CudnnDescriptor y, int algo, size_t* bytes) = nullptr;
  int (*get_backward_data_workspace)(CudnnHandle, CudnnDescriptor w, CudnnDescriptor dy, CudnnDescriptor conv,
                                     CudnnDescriptor dx, int algo, size_t* bytes) = nullptr;
  int (*convolution_forward)(CudnnHandle, const void* alpha, CudnnDescriptor x_desc, const void* x,
                             CudnnDescriptor w_desc, const void* w, CudnnDescriptor conv, int algo, void* workspace,
                             size_t workspace_bytes, const void* beta, CudnnDescriptor y_desc, void* y) = nullptr;
  int (*convolution_backward_data)(CudnnHandle, const void* alpha, CudnnDescriptor w_desc, const void* w,
                                   CudnnDescriptor dy_desc, const void* dy, CudnnDescriptor conv, int algo,
                                   void* workspace, size_t workspace_bytes, const void* beta, CudnnDescriptor dx_desc,
                                   void* dx) = nullptr;
  int (*add_tensor)(CudnnHandle, const void* alpha, CudnnDescriptor a_desc, const void* a, const void* beta,
                    CudnnDescriptor c_desc, void* c) = nullptr;
  int (*create_pooling)(CudnnDescriptor*) = nullptr;
  int (*set_pooling_nd)(CudnnDescriptor, int mode, int nan_propagation, int spatial_rank, const int* window,
                        const int* padding, const int* stride) = nullptr;
  int (*destroy_pooling)(CudnnDescriptor) = nullptr;
  int (*get_pooling_output_dims)(CudnnDescriptor pooling, CudnnDescriptor x, int rank, int* dims) = nullptr;
  int (*pooling_forward)(CudnnHandle, CudnnDescriptor pooling, const void* alpha, CudnnDescriptor x_desc,
                         const void* x, const void* beta, CudnnDescriptor y_desc, void* y) = nullptr;
  int (*softmax_forward)(CudnnHandle, int algorithm, int mode, const void* alpha, CudnnDescriptor x_desc,
                         const void* x, const void* beta, CudnnDescriptor y_desc, void* y) = nullptr;
};

// Loaded once per process; check `error` before use.
const CudnnApi& cudnn_api();

// "cudnnConvolutionForward: CUDNN_STATUS_NOT_SUPPORTED" as a failure, or success for status 0.
Status cudnn_status(int status, const char* call);

// cuDNN's constants that are not plan enums.
inline constexpr int kCudnnTensorNchw = 0;
inline constexpr int kCudnnCrossCorrelation = 1;
inline constexpr int kCudnnPropagateNan = 1;

// A cuDNN handle on the default stream (a fresh handle's stream), destroyed with the owner.
class CudnnHandleOwner {
 public:
  CudnnHandleOwner();
  ~CudnnHandleOwner();
  CudnnHandleOwner(const CudnnHandleOwner&) = delete;
  CudnnHandleOwner& operator=(const CudnnHandleOwner&) = delete;
  CudnnHandle get() const { return handle_; }
  const Status& created() const { return created_; }

 private:
  CudnnHandle handle_ = nullptr;
  Status created_;
};

// A tensor, filter, convolution or pooling descriptor, destroyed with the owner. Setting
// it up is the caller's: the status of the set call decides whether it is usable.
class CudnnDescriptorOwner {
 public:
  using Destroy = int (*)(CudnnDescriptor);
  CudnnDescriptorOwner(int (*create)(CudnnDescriptor*), Destroy destroy);
  ~CudnnDescriptorOwner();
  CudnnDescriptorOwner(const CudnnDescriptorOwner&) = delete;
  CudnnDescriptorOwner& operator=(const CudnnDescriptorOwner&) = delete;
  CudnnDescriptor get() const { return descriptor_; }

 private:
  CudnnDescriptor descriptor_ = nullptr;
  Destroy destroy_;
};

// A tensor descriptor holding `dims` (packed, row-major) of `type`.
Expected<std::unique_ptr<CudnnDescriptorOwner>> make_tensor_descriptor(const CudnnTensorDims& dims,
                                                                                CudnnDataType type);

}  // namespace dragon::bench
