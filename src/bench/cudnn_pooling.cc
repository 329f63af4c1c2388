// Max and average pooling through cudnnPoolingForward.
#include <fmt/format.h>

#include "dragon/bench/cudnn_api.h"
#include "dragon/bench/cudnn_baseline.h"
#include "dragon/bench/cudnn_descriptors.h"

namespace dragon::bench {
namespace {

std::string mode_name(CudnnPoolingMode mode) {
  switch (mode) {
    case CudnnPoolingMode::kMax: return "max";
    case CudnnPoolingMode::kAverageIncludePadding: return "average counting padding";
    case CudnnPoolingMode::kAverageExcludePadding: return "average without padding";
  }
  return "?";
}

class CudnnPooling final : public CudnnBaseline {
 public:
  explicit CudnnPooling(const CudnnPoolingPlan& plan) : plan_(plan) { setup_ = set_up(); }

  std::string name() const override {
    return fmt::format("cudnnPoolingForward ({}, {}{})", to_string(plan_.data_type), mode_name(plan_.mode),
                       plan_.batch_slices > 1 ? fmt::format(", {} batch slices", plan_.batch_slices) : "");
  }

  Status run(const std::vector<runtime::DevicePtr>& params) override {
    if (!setup_.ok()) return setup_;
    const float one = 1, zero = 0;
    const int64_t bytes = element_bytes(plan_.data_type);
    for (int slice = 0; slice < plan_.batch_slices; ++slice) {
      runtime::DevicePtr x = params.at(plan_.x_param) + slice * plan_.x.slice_elements() * bytes;
      runtime::DevicePtr y = params.at(plan_.y_param) + slice * plan_.y.slice_elements() * bytes;
      Status s = cudnn_status(
          cudnn_api().pooling_forward(handle_.get(), d_.pooling->get(), &one, d_.x->get(),
                                      reinterpret_cast<const void*>(x), &zero, d_.y->get(), reinterpret_cast<void*>(y)),
          "cudnnPoolingForward");
      if (!s.ok()) return s;
    }
    return {};
  }

 private:
  Status set_up() {
    if (!handle_.created().ok()) return handle_.created();
    Expected<CudnnPoolingDescriptors> descriptors = make_pooling_descriptors(plan_);
    if (!descriptors.ok()) return descriptors.error();
    d_ = std::move(descriptors.value());
    return {};
  }

  CudnnPoolingPlan plan_;
  CudnnHandleOwner handle_;
  CudnnPoolingDescriptors d_;
  Status setup_;
};

}  // namespace

std::unique_ptr<CudnnBaseline> make_cudnn_pooling(const CudnnPoolingPlan& plan) {
  return std::make_unique<CudnnPooling>(plan);
}

}  // namespace dragon::bench
