// What the cuDNN baseline of a workload calls, worked out without a GPU or the library:
// the tensor, filter, convolution, pooling and softmax descriptors' contents and the
// parameter each operand comes from. Convolutions, transposed convolutions (as cuDNN's
// backward-data of the forward conv they transpose), max/avg pooling and softmax/log_softmax
// have one; every other op kind, and the settings cuDNN cannot express, have a reason
// instead. Planning is separate from running so the mapping from our op parameters to
// cuDNN's is unit-tested on the suites' shapes (tests/unit/bench/test_cudnn_plan.cc).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "dragon/ops/op_registry.h"

namespace dragon::bench {

// cuDNN's enum values (cudnn_graph.h, cudnn_ops.h: a stable ABI), so the build needs no
// cuDNN headers.
enum class CudnnDataType : int { kFloat = 0, kDouble = 1, kHalf = 2, kBfloat16 = 9 };
enum class CudnnMathType : int { kDefault = 0, kTensorOp = 1, kFma = 3 };
enum class CudnnPoolingMode : int { kMax = 0, kAverageIncludePadding = 1, kAverageExcludePadding = 2 };
enum class CudnnSoftmaxAlgorithm : int { kAccurate = 1, kLog = 2 };
enum class CudnnSoftmaxMode : int { kChannel = 1 };

std::string to_string(CudnnMathType math);   // "FMA math", "tensor-op math", "default math"

std::string to_string(CudnnDataType type);  // "f32", "f16", "bf16", "f64"
int64_t element_bytes(CudnnDataType type);

// A packed, row-major tensor of at least 4 dimensions (cuDNN's legacy descriptors need 4 or
// 5): 1D operands get a unit height before their length, as torch does for cuDNN.
struct CudnnTensorDims {
  std::vector<int> dims;
  std::vector<int> strides;
  bool operator==(const CudnnTensorDims&) const = default;
  // Elements between consecutive batch slices: the whole tensor's.
  int64_t slice_elements() const { return strides.empty() ? 0 : int64_t{strides[0]} * dims[0]; }
};

// cuDNN's legacy descriptors hold at most 2^31 - 1 elements. A larger operand runs as
// `batch_slices` calls over consecutive, equal slices of the batch (the outer extent for
// softmax), as torch splits its cuDNN convolutions; a plan's dims are one slice's.

struct CudnnConvolutionPlan {
  // Transposed: Y = cudnnConvolutionBackwardData(W, X), the gradient of the forward conv
  // from Y's shape to X's that this one transposes; its filter layout [C_in, C_out/groups,
  // k...] is torch's ConvTranspose weight layout as it stands.
  bool transposed = false;
  CudnnTensorDims x, y;        // the op's input X and output Y (for backward-data: dy = X, dx = Y)
  std::vector<int> filter;     // [K, C/groups, k...] of the forward conv, NCHW filter format
  std::vector<int> padding, stride, dilation;  // one per spatial dimension cuDNN sees
  int groups = 1;
  std::optional<CudnnTensorDims> bias;  // [1, C_out, 1...]: added by cudnnAddTensor after the conv
  CudnnDataType data_type = CudnnDataType::kFloat;
  CudnnDataType compute_type = CudnnDataType::kFloat;
  CudnnMathType math_type = CudnnMathType::kFma;
  int x_param = 0, w_param = 1, bias_param = -1, y_param = 2;  // indices into the function's parameters
  int batch_slices = 1;
};

struct CudnnPoolingPlan {
  CudnnPoolingMode mode = CudnnPoolingMode::kMax;
  CudnnTensorDims x, y;
  std::vector<int> window, padding, stride;  // one per spatial dimension cuDNN sees
  CudnnDataType data_type = CudnnDataType::kFloat;
  int x_param = 0, y_param = 1;
  int batch_slices = 1;
};

// The softmax axis becomes cuDNN's channel axis of [outer, length, inner, 1].
struct CudnnSoftmaxPlan {
  CudnnSoftmaxAlgorithm algorithm = CudnnSoftmaxAlgorithm::kAccurate;
  CudnnSoftmaxMode mode = CudnnSoftmaxMode::kChannel;
  CudnnTensorDims x;  // Y has the same dims
  CudnnDataType data_type = CudnnDataType::kFloat;
  int x_param = 0, y_param = 1;
  int batch_slices = 1;
};

using CudnnPlan = std::variant<CudnnConvolutionPlan, CudnnPoolingPlan, CudnnSoftmaxPlan>;

// The plan of `workload`, or nullopt with `why_not` saying why cuDNN has no equivalent
// (another op kind, max-pool dilation or indices, a ceil_mode output cuDNN's floor rule
// cannot give, f64, one batch entry of 2^31 elements or more...).
std::optional<CudnnPlan> plan_cudnn(const ops::Workload& workload, std::string& why_not);

// Packed row-major dims and strides of `shape`, or nullopt when it holds more elements than
// cuDNN's int counts.
std::optional<CudnnTensorDims> packed_tensor(const std::vector<int64_t>& shape);

}  // namespace dragon::bench
