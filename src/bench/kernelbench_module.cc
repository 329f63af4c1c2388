// The table of KernelBench Models per op kind (kernelbench_module.h). Layer arguments come
// from the spec the kernel was compiled for; forward expressions follow torch's own
// operators at the ops' documented semantics (src/ops/*.cc names the KernelBench problem
// each op stands for).
#include "dragon/bench/kernelbench_module.h"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dragon::bench {
namespace {

using Entry = std::function<std::optional<KernelBenchModule>(const ops::OpArgs&)>;

std::string py_bool(bool b) { return b ? "True" : "False"; }

// (3,) for one extent, (3, 5) for two: a Python tuple.
std::string py_tuple(const std::vector<int64_t>& values) {
  if (values.size() == 1) return fmt::format("({},)", values[0]);
  return fmt::format("({})", fmt::join(values, ", "));
}

std::string py_float(double v) { return fmt::format("{}", v); }

KernelBenchModule parameter_free(std::string forward) { return KernelBenchModule{{}, std::move(forward)}; }

Entry unary(std::string torch_call) {
  return [torch_call](const ops::OpArgs&) { return parameter_free(torch_call + "(X)"); };
}

bool has(const ops::OpArgs& args, std::string_view name) { return args.values().count(name) > 0; }

bool keepdim(const ops::OpArgs& args) { return has(args, "keepdim") && args.get_bool("keepdim"); }

Entry reduction(std::string torch_call) {
  return [torch_call](const ops::OpArgs& args) {
    return parameter_free(
        fmt::format("{}(X, dim={}, keepdim={})", torch_call, args.get_int("axis"), py_bool(keepdim(args))));
  };
}

Entry conv(int rank, bool transposed) {
  return [rank, transposed](const ops::OpArgs& args) {
    const std::string layer = fmt::format("nn.{}{}d", transposed ? "ConvTranspose" : "Conv", rank);
    std::string constructor = fmt::format(
        "{}({}, {}, kernel_size={}, stride={}, padding={}, ", layer, args.get_int("in_channels"),
        args.get_int("out_channels"), py_tuple(args.get_shape("kernel")), py_tuple(args.get_shape("stride")),
        py_tuple(args.get_shape("padding")));
    if (transposed) constructor += fmt::format("output_padding={}, ", py_tuple(args.get_shape("output_padding")));
    constructor += fmt::format("dilation={}, groups={}, bias={})", py_tuple(args.get_shape("dilation")),
                               args.get_int("groups"), py_bool(args.get_bool("bias")));
    KernelBenchLayer conv{"conv", constructor, {{"W", "weight"}}};
    if (args.get_bool("bias")) conv.bindings.push_back({"bias", "bias"});
    return KernelBenchModule{{conv}, "self.conv(X)"};
  };
}

KernelBenchModule depthwise_separable(const ops::OpArgs& args) {
  const int64_t channels = args.get_int("in_channels");
  const bool bias = args.get_bool("bias");
  KernelBenchLayer depthwise{
      "depthwise",
      fmt::format("nn.Conv2d({0}, {0}, kernel_size={1}, stride={2}, padding={3}, dilation={4}, groups={0}, bias={5})",
                  channels, py_tuple(args.get_shape("kernel")), py_tuple(args.get_shape("stride")),
                  py_tuple(args.get_shape("padding")), py_tuple(args.get_shape("dilation")), py_bool(bias)),
      {{"W_depthwise", "weight"}}};
  KernelBenchLayer pointwise{
      "pointwise",
      fmt::format("nn.Conv2d({}, {}, kernel_size=1, bias={})", channels, args.get_int("out_channels"), py_bool(bias)),
      {{"W_pointwise", "weight"}}};
  if (bias) {
    depthwise.bindings.push_back({"bias_depthwise", "bias"});
    pointwise.bindings.push_back({"bias_pointwise", "bias"});
  }
  return KernelBenchModule{{depthwise, pointwise}, "self.pointwise(self.depthwise(X))"};
}

KernelBenchModule layer_norm(const ops::OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  const int64_t dims = args.get_int("normalized_dims");
  const std::vector<int64_t> normalized(shape.end() - dims, shape.end());
  const bool affine = args.get_bool("elementwise_affine");
  KernelBenchLayer ln{"ln",
                      fmt::format("nn.LayerNorm({}, eps={}, elementwise_affine={})", py_tuple(normalized),
                                  py_float(args.get_float("eps")), py_bool(affine)),
                      {}};
  if (affine) ln.bindings = {{"weight", "weight"}, {"bias", "bias"}};
  return KernelBenchModule{{ln}, "self.ln(X)"};
}


// BatchNorm, InstanceNorm and GroupNorm: their weight (ones) and bias (zeros) draw nothing
// from the RNG, but Model has them and ModelNew passes them on.
KernelBenchModule channel_norm(std::string constructor, bool affine) {
  KernelBenchLayer norm{"norm", std::move(constructor), {}};
  if (affine) norm.bindings = {{"weight", "weight"}, {"bias", "bias"}};
  return KernelBenchModule{{norm}, "self.norm(X)"};
}

std::optional<KernelBenchModule> batch_norm(const ops::OpArgs& args) {
  // In eval mode the running statistics would be inputs of the kernel and buffers of the
  // module: not expressed. KernelBench calls the module in training mode.
  if (!args.get_bool("training")) return std::nullopt;
  const std::vector<int64_t>& shape = args.get_shape("shape");
  return channel_norm(
                      fmt::format("nn.BatchNorm{}d({}, eps={})", std::max<size_t>(shape.size(), 3) - 2, shape[1],
                                  py_float(args.get_float("eps"))),
                      true);
}

KernelBenchModule instance_norm(const ops::OpArgs& args) {
  const std::vector<int64_t>& shape = args.get_shape("shape");
  const bool affine = args.get_bool("affine");
  return channel_norm(
                      fmt::format("nn.InstanceNorm{}d({}, eps={}, affine={})", shape.size() - 2, shape[1],
                                  py_float(args.get_float("eps")), py_bool(affine)),
                      affine);
}

KernelBenchModule group_norm(const ops::OpArgs& args) {
  return channel_norm(
                      fmt::format("nn.GroupNorm({}, {}, eps={})", args.get_int("num_groups"),
                                  args.get_shape("shape")[1], py_float(args.get_float("eps"))),
                      true);
}

// torch's scans along `dim`; reverse scans the flipped tensor, exclusive leaves out each
// element's own term (a sum only).
KernelBenchModule scan(const ops::OpArgs& args, std::string_view torch_call) {
  const int64_t dim = args.get_int("dim");
  const bool reverse = has(args, "reverse") && args.get_bool("reverse");
  std::string text = reverse ? fmt::format("{}(X.flip({}), dim={}).flip({})", torch_call, dim, dim, dim)
                             : fmt::format("{}(X, dim={})", torch_call, dim);
  if (has(args, "exclusive") && args.get_bool("exclusive")) text += " - X";
  return parameter_free(text);
}

Entry pool(std::string_view kind, int rank) {
  return [kind = std::string(kind), rank](const ops::OpArgs& args) -> std::optional<KernelBenchModule> {
    std::string constructor = fmt::format("nn.{}Pool{}d(kernel_size={}, stride={}, padding={}, ", kind, rank,
                                          args.get_int("kernel"), args.get_int("stride"), args.get_int("padding"));
    if (kind == "Max") {
      // Indices would be a second output, which a KernelBench forward does not return.
      if (args.get_bool("return_indices")) return std::nullopt;
      constructor += fmt::format("dilation={}, ceil_mode={})", args.get_int("dilation"),
                                 py_bool(args.get_bool("ceil_mode")));
    } else {
      constructor += fmt::format("ceil_mode={}, count_include_pad={})", py_bool(args.get_bool("ceil_mode")),
                                 py_bool(args.get_bool("count_include_pad")));
    }
    return KernelBenchModule{{KernelBenchLayer{"pool", constructor, {}}}, "self.pool(X)"};
  };
}

const std::map<std::string, Entry, std::less<>>& table() {
  static const std::map<std::string, Entry, std::less<>> entries = {
      {"relu", unary("torch.relu")},
      {"sigmoid", unary("torch.sigmoid")},
      {"tanh", unary("torch.tanh")},
      {"selu", unary("torch.selu")},
      {"hardsigmoid", unary("torch.nn.functional.hardsigmoid")},
      {"swish", [](const ops::OpArgs&) { return parameter_free("X * torch.sigmoid(X)"); }},
      {"softsign", [](const ops::OpArgs&) { return parameter_free("X / (1 + torch.abs(X))"); }},
      {"leaky_relu",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("torch.nn.functional.leaky_relu(X, negative_slope={})",
                                           py_float(a.get_float("negative_slope"))));
       }},
      {"elu",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("torch.nn.functional.elu(X, alpha={})", py_float(a.get_float("alpha"))));
       }},
      {"hardtanh",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("torch.nn.functional.hardtanh(X, min_val={}, max_val={})",
                                           py_float(a.get_float("min_val")), py_float(a.get_float("max_val"))));
       }},
      {"softplus",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("torch.nn.functional.softplus(X, beta={}, threshold={})",
                                           py_float(a.get_float("beta")), py_float(a.get_float("threshold"))));
       }},
      {"gelu",
       [](const ops::OpArgs& a) {
         return parameter_free(
             fmt::format("torch.nn.functional.gelu(X, approximate='{}')", a.get_choice("approximate")));
       }},
      {"softmax",
       [](const ops::OpArgs& a) { return parameter_free(fmt::format("torch.softmax(X, dim={})", a.get_int("axis"))); }},
      {"log_softmax",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("torch.log_softmax(X, dim={})", a.get_int("axis")));
       }},
      {"matmul",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("torch.matmul({}, {})", a.get_bool("trans_a") ? "A.T" : "A",
                                           a.get_bool("trans_b") ? "B.T" : "B"));
       }},
      {"batch_matmul", [](const ops::OpArgs&) { return parameter_free("torch.matmul(A, B)"); }},
      {"sum", reduction("torch.sum")},
      {"mean", reduction("torch.mean")},
      {"max", reduction("torch.amax")},
      {"min", reduction("torch.amin")},
      {"argmax", reduction("torch.argmax")},
      {"argmin", reduction("torch.argmin")},
      {"conv1d", conv(1, false)},
      {"conv2d", conv(2, false)},
      {"conv3d", conv(3, false)},
      {"conv_transpose1d", conv(1, true)},
      {"conv_transpose2d", conv(2, true)},
      {"conv_transpose3d", conv(3, true)},
      {"depthwise_separable_conv2d", depthwise_separable},
      {"layer_norm", layer_norm},
      {"batch_norm", batch_norm},
      {"instance_norm", instance_norm},
      {"group_norm", group_norm},
      {"rms_norm",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("X / torch.sqrt(torch.mean(X ** 2, dim={}, keepdim=True) + {})",
                                           a.get_int("axis"), py_float(a.get_float("eps"))));
       }},
      {"frobenius_norm", [](const ops::OpArgs&) { return parameter_free("X / torch.norm(X, p='fro')"); }},
      {"l1_norm",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("X / torch.mean(torch.abs(X), dim={}, keepdim=True)", a.get_int("axis")));
       }},
      {"l2_norm",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("X / torch.norm(X, p=2, dim={}, keepdim=True)", a.get_int("axis")));
       }},
      {"cumsum", [](const ops::OpArgs& a) { return scan(a, "torch.cumsum"); }},
      {"cumprod", [](const ops::OpArgs& a) { return scan(a, "torch.cumprod"); }},
      {"max_pool1d", pool("Max", 1)},
      {"max_pool2d", pool("Max", 2)},
      {"max_pool3d", pool("Max", 3)},
      {"avg_pool1d", pool("Avg", 1)},
      {"avg_pool2d", pool("Avg", 2)},
      {"avg_pool3d", pool("Avg", 3)},
      {"mse_loss", [](const ops::OpArgs&) { return parameter_free("torch.mean((predictions - targets) ** 2)"); }},
      {"smooth_l1_loss",
       [](const ops::OpArgs& a) {
         return parameter_free(fmt::format("torch.nn.functional.smooth_l1_loss(predictions, targets, beta={})",
                                           py_float(a.get_float("beta"))));
       }},
      {"kl_div_loss",
       [](const ops::OpArgs&) {
         return parameter_free(
             "torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')");
       }},
  };
  return entries;
}

}  // namespace

std::optional<KernelBenchModule> kernelbench_module(const ops::OpKind& op, const ops::OpArgs& args) {
  auto it = table().find(op.name);
  if (it == table().end()) return std::nullopt;
  return it->second(args);  // nullopt too for a variant the Model cannot have (documented at the entry)
}

std::vector<std::string> kernelbench_module_kinds() {
  std::vector<std::string> kinds;
  for (const auto& [name, entry] : table()) kinds.push_back(name);
  return kinds;
}

}  // namespace dragon::bench
