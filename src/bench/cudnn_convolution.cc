// Convolutions through cudnnConvolutionForward, transposed ones through
// cudnnConvolutionBackwardData, with the algorithm and its workspace fixed at construction.
#include <fmt/format.h>

#include <array>
#include <optional>

#include "dragon/bench/cudnn_api.h"
#include "dragon/bench/cudnn_baseline.h"
#include "dragon/bench/cudnn_descriptors.h"

namespace dragon::bench {
namespace {

constexpr std::array<const char*, 8> kForwardAlgorithms = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
constexpr std::array<const char*, 6> kBackwardDataAlgorithms = {"ALGO_0",   "ALGO_1",         "FFT",
                                                                "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};

class CudnnConvolution final : public CudnnBaseline {
 public:
  explicit CudnnConvolution(const CudnnConvolutionPlan& plan) : plan_(plan) { setup_ = set_up(); }

  ~CudnnConvolution() override {
    if (workspace_) driver_->release(workspace_);
  }

  std::string name() const override {
    std::string call = plan_.transposed ? "cudnnConvolutionBackwardData" : "cudnnConvolutionForward";
    if (plan_.bias) call += " + cudnnAddTensor";
    std::string algorithm = "no algorithm";
    if (algo_ >= 0) {
      const char* algo_name = plan_.transposed ? (algo_ < 6 ? kBackwardDataAlgorithms[algo_] : "?")
                                               : (algo_ < 8 ? kForwardAlgorithms[algo_] : "?");
      algorithm = fmt::format("algo {}{}", algo_name, chosen_by_);
    }
    std::string slices = plan_.batch_slices > 1 ? fmt::format(", {} batch slices", plan_.batch_slices) : "";
    return fmt::format("{} ({}, {}, {}{})", call, to_string(plan_.data_type), to_string(plan_.math_type), algorithm,
                       slices);
  }

  Status run(const std::vector<runtime::DevicePtr>& params) override {
    if (!setup_.ok()) return setup_;
    for (int slice = 0; slice < plan_.batch_slices; ++slice) {
      const int64_t bytes = element_bytes(plan_.data_type);
      void* x = reinterpret_cast<void*>(params.at(plan_.x_param) + slice * plan_.x.slice_elements() * bytes);
      void* y = reinterpret_cast<void*>(params.at(plan_.y_param) + slice * plan_.y.slice_elements() * bytes);
      if (Status s = run_slice(params, x, y); !s.ok()) return s;
    }
    return {};
  }

 private:
  Status run_slice(const std::vector<runtime::DevicePtr>& params, void* x, void* y) {
    const CudnnApi& api = cudnn_api();
    const float one = 1, zero = 0;
    void* w = reinterpret_cast<void*>(params.at(plan_.w_param));
    void* workspace = reinterpret_cast<void*>(workspace_);
    if (plan_.transposed) {
      Status s = cudnn_status(
          api.convolution_backward_data(handle_.get(), &one, d_.filter->get(), w, d_.x->get(), x,
                                        d_.convolution->get(), algo_, workspace, workspace_bytes_, &zero, d_.y->get(),
                                        y),
          "cudnnConvolutionBackwardData");
      if (!s.ok()) return s;
    } else {
      Status s = cudnn_status(
          api.convolution_forward(handle_.get(), &one, d_.x->get(), x, d_.filter->get(), w, d_.convolution->get(),
                                  algo_, workspace, workspace_bytes_, &zero, d_.y->get(), y),
          "cudnnConvolutionForward");
      if (!s.ok()) return s;
    }
    if (!plan_.bias) return {};
    void* bias = reinterpret_cast<void*>(params.at(plan_.bias_param));
    return cudnn_status(api.add_tensor(handle_.get(), &one, d_.bias->get(), bias, &one, d_.y->get(), y),
                        "cudnnAddTensor");
  }

  Status set_up() {
    if (!handle_.created().ok()) return handle_.created();
    Expected<runtime::CudaDriver*> driver = runtime::CudaDriver::get();
    if (!driver.ok()) return driver.error();
    driver_ = driver.value();
    Expected<CudnnConvolutionDescriptors> descriptors = make_convolution_descriptors(plan_);
    if (!descriptors.ok()) return descriptors.error();
    d_ = std::move(descriptors.value());
    Status s = choose_algorithm();
    if (!s.ok()) return s;
    if (workspace_bytes_ > 0) {
      Expected<runtime::DevicePtr> workspace = driver_->allocate(workspace_bytes_);
      if (!workspace.ok()) return workspace.error();
      workspace_ = workspace.value();
    }
    return {};
  }

  // An algorithm is usable when it ran (or would run) and keeps the plan's math: for f32
  // that excludes TF32, which Find might otherwise report as fastest.
  bool usable(const CudnnAlgoPerf& perf) const {
    if (perf.status != 0) return false;
    return plan_.math_type != CudnnMathType::kFma || perf.math_type == static_cast<int>(CudnnMathType::kFma);
  }

  // Find measures every algorithm (it allocates its own operands and workspace); where it
  // fails, for instance out of memory beside a large problem's buffers, the _v7 heuristic's
  // ranking stands in. Either way the first usable entry is the fastest known.
  Status choose_algorithm() {
    const CudnnApi& api = cudnn_api();
    std::array<CudnnAlgoPerf, 8> results{};
    int returned = 0;
    auto query = [&](bool find) {
      returned = 0;
      if (plan_.transposed) {
        auto fn = find ? api.find_backward_data : api.get_backward_data_v7;
        return fn(handle_.get(), d_.filter->get(), d_.x->get(), d_.convolution->get(), d_.y->get(), 6, &returned,
                  results.data());
      }
      auto fn = find ? api.find_forward : api.get_forward_v7;
      return fn(handle_.get(), d_.x->get(), d_.filter->get(), d_.convolution->get(), d_.y->get(), 8, &returned,
                results.data());
    };
    std::string failures;
    // cuDNN may report another math type than the descriptor's FMA for an algorithm that
    // also runs under FMA; the fastest such one is kept in case none reports FMA.
    std::optional<CudnnAlgoPerf> forced;
    for (bool find : {true, false}) {
      const char* call = plan_.transposed ? (find ? "cudnnFindConvolutionBackwardDataAlgorithm"
                                                  : "cudnnGetConvolutionBackwardDataAlgorithm_v7")
                                          : (find ? "cudnnFindConvolutionForwardAlgorithm"
                                                  : "cudnnGetConvolutionForwardAlgorithm_v7");
      int status = query(find);
      if (status != 0) {
        failures += fmt::format("{}: {}; ", call, api.get_error_string(status));
        continue;
      }
      for (int i = 0; i < returned; ++i) {
        if (!forced && results[i].status == 0) forced = results[i];
        if (!usable(results[i])) continue;
        algo_ = results[i].algo;
        workspace_bytes_ = results[i].memory;
        chosen_by_ = find ? ", fastest found" : ", heuristic";
        return cudnn_status(api.set_convolution_math(d_.convolution->get(), results[i].math_type),
                            "cudnnSetConvolutionMathType");
      }
      failures += fmt::format("{}: no usable algorithm among {}; ", call, returned);
    }
    if (forced && plan_.math_type == CudnnMathType::kFma) {
      // The descriptor stays at FMA math, which restricts cuDNN to FMA kernels for this
      // algorithm; the workspace is asked again under it.
      algo_ = forced->algo;
      chosen_by_ = ", FMA forced";
      return workspace_under_descriptor_math();
    }
    return DRAGON_RUNTIME_FAILURE("cuDNN algorithm choice", failures, "");
  }

  Status workspace_under_descriptor_math() {
    const CudnnApi& api = cudnn_api();
    int status = plan_.transposed
                     ? api.get_backward_data_workspace(handle_.get(), d_.filter->get(), d_.x->get(),
                                                       d_.convolution->get(), d_.y->get(), algo_, &workspace_bytes_)
                     : api.get_forward_workspace(handle_.get(), d_.x->get(), d_.filter->get(), d_.convolution->get(),
                                                 d_.y->get(), algo_, &workspace_bytes_);
    return cudnn_status(status, plan_.transposed ? "cudnnGetConvolutionBackwardDataWorkspaceSize"
                                                 : "cudnnGetConvolutionForwardWorkspaceSize");
  }

  CudnnConvolutionPlan plan_;
  CudnnHandleOwner handle_;
  CudnnConvolutionDescriptors d_;
  runtime::CudaDriver* driver_ = nullptr;
  int algo_ = -1;
  std::string chosen_by_;
  size_t workspace_bytes_ = 0;
  runtime::DevicePtr workspace_ = 0;
  Status setup_;
};

}  // namespace

std::unique_ptr<CudnnBaseline> make_cudnn_convolution(const CudnnConvolutionPlan& plan) {
  return std::make_unique<CudnnConvolution>(plan);
}

}  // namespace dragon::bench
