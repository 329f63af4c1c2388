// Eager (ATen) computations of the activation op family; see eager_op_table.h. Each is the
// torch.nn.functional call of the KernelBench reference (or its hand-written formula where
// the reference writes one out: swish, softsign) on X, with Y in X's shape and dtype.
#include <utility>

#include "eager_op_table.h"

namespace dragon::bench::torch_eager {
namespace {

// The entry of an elementwise op: Y = fn(X, params), one input, one output.
template <typename Fn>
EagerOp unary(Fn fn) {
  return [fn = std::move(fn)](const EagerOpParams& params, const std::vector<at::Tensor>& inputs) {
    return std::vector<at::Tensor>{fn(inputs.at(0), params).contiguous()};
  };
}

}  // namespace

void add_activation_ops(EagerOpTable& table) {
  table.add("relu", "at::relu", unary([](const at::Tensor& x, const EagerOpParams&) { return at::relu(x); }));
  table.add("leaky_relu", "at::leaky_relu", unary([](const at::Tensor& x, const EagerOpParams& p) {
              return at::leaky_relu(x, p.get_float("negative_slope"));
            }));
  table.add("sigmoid", "at::sigmoid", unary([](const at::Tensor& x, const EagerOpParams&) { return at::sigmoid(x); }));
  table.add("tanh", "at::tanh", unary([](const at::Tensor& x, const EagerOpParams&) { return at::tanh(x); }));
  // KernelBench 25 writes x * torch.sigmoid(x), two kernels, not F.silu.
  table.add("swish", "x * at::sigmoid(x)",
            unary([](const at::Tensor& x, const EagerOpParams&) { return x * at::sigmoid(x); }));
  // Our choice names are torch's approximate strings ("none", "tanh").
  table.add("gelu", "at::gelu", unary([](const at::Tensor& x, const EagerOpParams& p) {
              return at::gelu(x, p.get_choice("approximate"));
            }));
  table.add("selu", "at::selu", unary([](const at::Tensor& x, const EagerOpParams&) { return at::selu(x); }));
  table.add("hardsigmoid", "at::hardsigmoid",
            unary([](const at::Tensor& x, const EagerOpParams&) { return at::hardsigmoid(x); }));
  table.add("hardswish", "at::hardswish",
            unary([](const at::Tensor& x, const EagerOpParams&) { return at::hardswish(x); }));
  table.add("softplus", "at::softplus", unary([](const at::Tensor& x, const EagerOpParams& p) {
              return at::softplus(x, p.get_float("beta"), p.get_float("threshold"));
            }));
  // KernelBench 30 writes x / (1 + torch.abs(x)); ATen has no softsign kernel either
  // (F.softsign is the same composition in Python).
  table.add("softsign", "x / (1 + at::abs(x))",
            unary([](const at::Tensor& x, const EagerOpParams&) { return x / (at::abs(x) + 1); }));
  table.add("elu", "at::elu",
            unary([](const at::Tensor& x, const EagerOpParams& p) { return at::elu(x, p.get_float("alpha")); }));
  table.add("hardtanh", "at::hardtanh", unary([](const at::Tensor& x, const EagerOpParams& p) {
              return at::hardtanh(x, p.get_float("min_val"), p.get_float("max_val"));
            }));
  table.add("softmax", "at::softmax",
            unary([](const at::Tensor& x, const EagerOpParams& p) { return at::softmax(x, p.get_int("axis")); }));
  table.add("log_softmax", "at::log_softmax", unary([](const at::Tensor& x, const EagerOpParams& p) {
              return at::log_softmax(x, p.get_int("axis"));
            }));
}

}  // namespace dragon::bench::torch_eager
