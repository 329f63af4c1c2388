// softmax and log_softmax through cudnnSoftmaxForward over the channel axis of
// [outer, length, inner, 1]: CUDNN_SOFTMAX_ACCURATE subtracts the maximum first, as torch
// and our op do; CUDNN_SOFTMAX_LOG does the same for log_softmax.
#include <fmt/format.h>

#include "dragon/bench/cudnn_api.h"
#include "dragon/bench/cudnn_baseline.h"

namespace dragon::bench {
namespace {

class CudnnSoftmax final : public CudnnBaseline {
 public:
  explicit CudnnSoftmax(const CudnnSoftmaxPlan& plan) : plan_(plan) { setup_ = set_up(); }

  std::string name() const override {
    return fmt::format("cudnnSoftmaxForward ({}, {}, channel mode{})", to_string(plan_.data_type),
                       plan_.algorithm == CudnnSoftmaxAlgorithm::kLog ? "log" : "accurate",
                       plan_.batch_slices > 1 ? fmt::format(", {} row slices", plan_.batch_slices) : "");
  }

  Status run(const std::vector<runtime::DevicePtr>& params) override {
    if (!setup_.ok()) return setup_;
    const float one = 1, zero = 0;
    const int64_t slice_bytes = plan_.x.slice_elements() * element_bytes(plan_.data_type);
    for (int slice = 0; slice < plan_.batch_slices; ++slice) {
      runtime::DevicePtr x = params.at(plan_.x_param) + slice * slice_bytes;
      runtime::DevicePtr y = params.at(plan_.y_param) + slice * slice_bytes;
      Status s = cudnn_status(
          cudnn_api().softmax_forward(handle_.get(), static_cast<int>(plan_.algorithm), static_cast<int>(plan_.mode),
                                      &one, x_->get(), reinterpret_cast<const void*>(x), &zero, x_->get(),
                                      reinterpret_cast<void*>(y)),
          "cudnnSoftmaxForward");
      if (!s.ok()) return s;
    }
    return {};
  }

 private:
  Status set_up() {
    if (!handle_.created().ok()) return handle_.created();
    auto x = make_tensor_descriptor(plan_.x, plan_.data_type);
    if (!x.ok()) return x.error();
    x_ = std::move(x.value());
    return {};
  }

  CudnnSoftmaxPlan plan_;
  CudnnHandleOwner handle_;
  std::unique_ptr<CudnnDescriptorOwner> x_;  // Y has the same descriptor
  Status setup_;
};

}  // namespace

std::unique_ptr<CudnnBaseline> make_cudnn_softmax(const CudnnSoftmaxPlan& plan) {
  return std::make_unique<CudnnSoftmax>(plan);
}

}  // namespace dragon::bench
