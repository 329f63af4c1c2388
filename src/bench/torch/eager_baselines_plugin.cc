// The plugin's export: EagerBaselines over the op table, on CPU or CUDA tensors that view
// the caller's memory. Exceptions from ATen (c10::Error) become std::runtime_error with
// the op kind, so the caller needs no torch type to report them.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Version.h>
#include <torch/version.h>

#if DRAGON_TORCH_HAS_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <cstring>
#include <stdexcept>

#include "dragon/bench/eager_baselines.h"
#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

at::Device device_of(EagerDevice device) { return device == EagerDevice::kCuda ? at::Device(at::kCUDA) : at::Device(at::kCPU); }

// libtorch's caching allocator keeps the blocks of freed tensors for reuse, and the driver
// cannot give them to anyone else: after a problem of 40 GB the next problem's own
// allocations (ours, outside libtorch) run out of device memory. A computation hands its
// blocks back when it ends, so a suite run holds only what the current problem needs.
void release_cached_device_memory() noexcept {
#if DRAGON_TORCH_HAS_CUDA
  try {
    c10::cuda::CUDACachingAllocator::emptyCache();
  } catch (const std::exception&) {
    // A device already in an error state: the error surfaces at the next call that checks.
  }
#endif
}

[[noreturn]] void rethrow(std::string_view op_kind, std::string_view what, const std::exception& error) {
  std::string message = error.what();
  // c10::Error appends a C++ backtrace after the first line: keep the message.
  if (size_t newline = message.find('\n'); newline != std::string::npos) message.resize(newline);
  throw std::runtime_error(std::string(op_kind) + ": " + std::string(what) + ": " + message);
}

class TorchComputation final : public EagerComputation {
 public:
  TorchComputation(std::string op_kind, const EagerOpEntry* entry, EagerOpParams params, std::vector<at::Tensor> inputs,
                   bool on_cuda)
      : op_kind_(std::move(op_kind)), entry_(entry), params_(std::move(params)), inputs_(std::move(inputs)),
        on_cuda_(on_cuda) {}
  ~TorchComputation() override {
    if (!on_cuda_) return;
    outputs_.clear();
    inputs_.clear();
    release_cached_device_memory();
  }
  TorchComputation(const TorchComputation&) = delete;
  TorchComputation& operator=(const TorchComputation&) = delete;

  void run() override {
    try {
      outputs_ = entry_->run(params_, inputs_);
    } catch (const std::exception& e) {
      rethrow(op_kind_, entry_->call, e);
    }
  }
  size_t num_outputs() const override { return outputs_.size(); }

  void copy_output(size_t index, ir::DataType dtype, void* host, int64_t bytes) override {
    if (index >= outputs_.size()) {
      throw std::runtime_error(op_kind_ + ": output " + std::to_string(index) + " asked, the last run gave " +
                               std::to_string(outputs_.size()));
    }
    try {
      at::Tensor cpu = outputs_[index].to(at::kCPU, to_scalar_type(dtype)).contiguous();
      if (static_cast<int64_t>(cpu.nbytes()) != bytes) {
        throw std::runtime_error("output " + std::to_string(index) + " has " + std::to_string(cpu.numel()) +
                                 " elements, our buffer " + std::to_string(bytes / cpu.element_size()));
      }
      std::memcpy(host, cpu.data_ptr(), static_cast<size_t>(bytes));
    } catch (const std::exception& e) {
      rethrow(op_kind_, "copying the output", e);
    }
  }

  void write_output(size_t index, const EagerTensor& destination) override {
    if (index >= outputs_.size()) {
      throw std::runtime_error(op_kind_ + ": output " + std::to_string(index) + " asked, the last run gave " +
                               std::to_string(outputs_.size()));
    }
    try {
      const at::Tensor& out = outputs_[index];
      auto options = at::TensorOptions().device(out.device()).dtype(to_scalar_type(destination.dtype));
      at::Tensor target = at::from_blob(destination.data, destination.shape, options);
      if (target.numel() != out.numel()) {
        throw std::runtime_error("output " + std::to_string(index) + " has " + std::to_string(out.numel()) +
                                 " elements, the destination " + std::to_string(target.numel()));
      }
      target.copy_(out.reshape(target.sizes()));
    } catch (const std::exception& e) {
      rethrow(op_kind_, "writing the output", e);
    }
  }

  void synchronize() override {
    if (!on_cuda_) return;
    // A device-to-host copy of one element waits for the stream's work, through ATen only.
    if (!outputs_.empty()) (void)outputs_.front().reshape({-1}).slice(0, 0, 1).to(at::kCPU);
  }

 private:
  std::string op_kind_;
  const EagerOpEntry* entry_;
  EagerOpParams params_;
  std::vector<at::Tensor> inputs_;
  std::vector<at::Tensor> outputs_;
  bool on_cuda_;
};

class TorchBaselines final : public EagerBaselines {
 public:
  std::string library() const override {
    std::string text = "libtorch " TORCH_VERSION;
    text += at::hasCUDA() ? " (CUDA available)" : " (CPU only)";
    return text;
  }
  bool cuda_available() const override { return at::hasCUDA(); }
  std::string call(std::string_view op_kind) const override {
    const EagerOpEntry* entry = eager_op_table().find(op_kind);
    return entry ? entry->call : std::string();
  }

  std::unique_ptr<EagerComputation> bind(std::string_view op_kind, const std::map<std::string, std::string>& params,
                                         const std::vector<EagerTensor>& inputs, EagerDevice device,
                                         bool promote_to_f64) const override {
    const EagerOpEntry* entry = eager_op_table().find(op_kind);
    if (!entry) throw std::runtime_error(std::string(op_kind) + ": no eager baseline for this op kind");
    if (device == EagerDevice::kCuda && !at::hasCUDA()) {
      throw std::runtime_error(std::string(op_kind) + ": this libtorch has no CUDA device");
    }
    std::vector<at::Tensor> tensors;
    try {
      for (const EagerTensor& input : inputs) {
        auto options = at::TensorOptions().device(device_of(device)).dtype(to_scalar_type(input.dtype));
        at::Tensor t = at::from_blob(input.data, input.shape, options);
        if (promote_to_f64 && at::isFloatingType(t.scalar_type())) t = t.to(at::kDouble);
        tensors.push_back(std::move(t));
      }
    } catch (const std::exception& e) {
      rethrow(op_kind, "viewing the inputs", e);
    }
    return std::make_unique<TorchComputation>(std::string(op_kind), entry, EagerOpParams(std::string(op_kind), params),
                                              std::move(tensors), device == EagerDevice::kCuda);
  }
};

}  // namespace
}  // namespace dragon::bench::torch_eager

extern "C" dragon::bench::EagerBaselines* dragon_eager_baselines_v1() {
  static dragon::bench::torch_eager::TorchBaselines baselines;
  return &baselines;
}
