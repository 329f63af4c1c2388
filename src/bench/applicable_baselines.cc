#include "dragon/bench/applicable_baselines.h"

#include "dragon/bench/cublas_gemm.h"
#include "dragon/bench/cudnn_plan.h"

namespace dragon::bench {

std::string ApplicableBaselines::describe() const {
  std::string text;
  if (!eager.has_value()) {
    text = "eager (no plugin here)";
  } else if (*eager) {
    text = "eager";
  }
  if (!vendor.empty()) text += (text.empty() ? "" : ", ") + vendor;
  return text.empty() ? "none" : text;
}

ApplicableBaselines applicable_baselines(const ops::Workload& workload, const EagerBaselines* eager) {
  ApplicableBaselines result;
  if (eager) result.eager = !eager->call(workload.op->name).empty();
  std::string why_not_cublas, why_not_cudnn;
  if (cublas_applies(workload, why_not_cublas)) {
    result.vendor = "cuBLAS";
  } else if (plan_cudnn(workload, why_not_cudnn)) {
    result.vendor = "cuDNN";
  } else {
    result.why_no_vendor = why_not_cublas + "; " + why_not_cudnn;
  }
  return result;
}

}  // namespace dragon::bench
