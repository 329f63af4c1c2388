// Eager (ATen) computations of the loss op family; see eager_op_table.h. Every loss is
// torch's mean reduction (or KernelBench's formula around one), a 0-d tensor like our
// 0-d loss buffer.
#include <vector>

#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

// Inputs: predictions, targets.
std::vector<at::Tensor> mse_loss(const EagerOpParams&, const std::vector<at::Tensor>& inputs) {
  return {at::mse_loss(inputs.at(0), inputs.at(1), at::Reduction::Mean)};
}

std::vector<at::Tensor> smooth_l1_loss(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  return {at::smooth_l1_loss(inputs.at(0), inputs.at(1), at::Reduction::Mean, params.get_float("beta"))};
}

// Inputs: predictions [batch, classes], targets [batch] as i64 class ids.
std::vector<at::Tensor> cross_entropy_loss(const EagerOpParams&, const std::vector<at::Tensor>& inputs) {
  return {at::cross_entropy_loss(inputs.at(0), inputs.at(1))};
}

// F.kl_div(torch.log(predictions), targets, reduction='batchmean'): ATen has no batchmean;
// F.kl_div sums and divides by the first extent itself.
std::vector<at::Tensor> kl_div_loss(const EagerOpParams&, const std::vector<at::Tensor>& inputs) {
  const at::Tensor& predictions = inputs.at(0);
  at::Tensor total = at::kl_div(at::log(predictions), inputs.at(1), at::Reduction::Sum);
  return {total / predictions.size(0)};
}

// Inputs: anchor, positive, negative.
std::vector<at::Tensor> triplet_margin_loss(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  return {at::triplet_margin_loss(inputs.at(0), inputs.at(1), inputs.at(2), params.get_float("margin"),
                                  params.get_float("p"), params.get_float("eps"), params.get_bool("swap"),
                                  at::Reduction::Mean)};
}

// KernelBench 100: torch.mean(torch.clamp(1 - predictions * targets, min=0)), targets
// [features] broadcast along the rows.
std::vector<at::Tensor> hinge_loss(const EagerOpParams&, const std::vector<at::Tensor>& inputs) {
  return {at::mean(at::clamp_min(1 - inputs.at(0) * inputs.at(1), 0))};
}

// torch.mean(1 - F.cosine_similarity(predictions, targets, dim=1)).
std::vector<at::Tensor> cosine_similarity_loss(const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
  at::Tensor cosine = at::cosine_similarity(inputs.at(0), inputs.at(1), /*dim=*/1, params.get_float("eps"));
  return {at::mean(1 - cosine)};
}

}  // namespace

void add_loss_ops(EagerOpTable& table) {
  table.add("mse_loss", "at::mse_loss", mse_loss);
  table.add("smooth_l1_loss", "at::smooth_l1_loss", smooth_l1_loss);
  table.add("cross_entropy_loss", "at::cross_entropy_loss", cross_entropy_loss);
  table.add("kl_div_loss", "at::kl_div (sum) / batch", kl_div_loss);
  table.add("triplet_margin_loss", "at::triplet_margin_loss", triplet_margin_loss);
  table.add("hinge_loss", "at::mean(at::clamp_min(1 - p * t, 0))", hinge_loss);
  table.add("cosine_similarity_loss", "at::mean(1 - at::cosine_similarity)", cosine_similarity_loss);
}

}  // namespace dragon::bench::torch_eager
