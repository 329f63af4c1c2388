#include "dragon/bench/cudnn_baseline.h"

#include <type_traits>

namespace dragon::bench {

std::unique_ptr<CudnnBaseline> make_cudnn_baseline(const ops::Workload& workload, std::string& why_not) {
  std::optional<CudnnPlan> plan = plan_cudnn(workload, why_not);
  if (!plan) return nullptr;
  return std::visit(
      [](const auto& p) -> std::unique_ptr<CudnnBaseline> {
        using Plan = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<Plan, CudnnConvolutionPlan>) return make_cudnn_convolution(p);
        if constexpr (std::is_same_v<Plan, CudnnPoolingPlan>) return make_cudnn_pooling(p);
        if constexpr (std::is_same_v<Plan, CudnnSoftmaxPlan>) return make_cudnn_softmax(p);
      },
      *plan);
}

}  // namespace dragon::bench
