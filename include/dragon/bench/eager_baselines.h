// The boundary to the libtorch eager baselines (KernelBench's reference computation, and an
// independent reference for correctness at full size). They live in a plugin,
// libdragon_eager_torch.so, built only where libtorch is and loaded by `dragon bench` and
// `dragon audit` at run time, so the dragon binary neither links nor starts libtorch and
// nothing else pays for its headers. Only standard types and the header-only DataType
// cross the boundary: the plugin links no dragon library, so the two sides share no state.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/dtype.h"

namespace dragon::bench {

enum class EagerDevice : uint8_t { kCpu, kCuda };

// A tensor the caller owns, viewed in place: dense, row-major, on the bound device.
struct EagerTensor {
  void* data = nullptr;
  ir::DataType dtype;
  std::vector<int64_t> shape;
};

// One problem bound to its inputs. Every run() computes the outputs again: that is the
// timed call (asynchronous on CUDA, on the current stream, as eager PyTorch does).
class EagerComputation {
 public:
  virtual ~EagerComputation() = default;
  virtual void run() = 0;
  virtual size_t num_outputs() const = 0;
  // Output `index` of the last run (output parameters in parameter order), converted to
  // `dtype` and copied to `host`, which holds `bytes` bytes; throws when the element count
  // differs from bytes / dtype size (the op returned another shape than our buffer's).
  virtual void copy_output(size_t index, ir::DataType dtype, void* host, int64_t bytes) = 0;
  // The same into `destination`, a buffer on the bound device (compared there, so gigabytes
  // of outputs need not cross to the host); same element-count check.
  virtual void write_output(size_t index, const EagerTensor& destination) = 0;
  virtual void synchronize() = 0;
};

// Errors are std::runtime_error with the op kind and what failed.
class EagerBaselines {
 public:
  virtual ~EagerBaselines() = default;
  // "libtorch 2.11.0 (CUDA 13.0)": for result files.
  virtual std::string library() const = 0;
  virtual bool cuda_available() const = 0;
  // The ATen call an op kind runs ("at::softmax"), or "" when there is no eager baseline.
  virtual std::string call(std::string_view op_kind) const = 0;
  // `params`: the op's canonical parameter values by name, as `dragon ops` spells them.
  // `inputs`: the PrimFunc's input parameters in parameter order. With `promote_to_f64`,
  // float inputs are converted to f64 first and the op runs in f64 (a reference twin).
  virtual std::unique_ptr<EagerComputation> bind(std::string_view op_kind,
                                                 const std::map<std::string, std::string>& params,
                                                 const std::vector<EagerTensor>& inputs, EagerDevice device,
                                                 bool promote_to_f64) const = 0;
};

}  // namespace dragon::bench

// The plugin's one export. Versioned: a changed boundary gets a new name, so a stale
// plugin is reported as missing rather than called with the wrong layout.
extern "C" dragon::bench::EagerBaselines* dragon_eager_baselines_v1();
