// The trivial outputs of the weak-problem audit.
#include "dragon/harness/trivial_outputs.h"

#include <cmath>

#include "dragon/harness/output_comparison.h"

namespace dragon::harness {
namespace {

tensor::HostTensor filled_like(const tensor::HostTensor& like, double value) {
  tensor::HostTensor t(like.dtype(), like.shape());
  t.fill(value);
  return t;
}

double finite_mean(const tensor::HostTensor& t) {
  double sum = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.get(i);
    if (!std::isfinite(v)) continue;
    sum += v;
    ++count;
  }
  return count == 0 ? 0 : sum / static_cast<double>(count);
}

TrivialOutput constant(std::string name, const std::vector<ReferenceOutput>& reference, double value) {
  TrivialOutput trivial{std::move(name), {}};
  for (const ReferenceOutput& out : reference) trivial.outputs.push_back(filled_like(out.native, value));
  return trivial;
}

}  // namespace

std::vector<TrivialOutput> make_trivial_outputs(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& args,
                                                const std::vector<ReferenceOutput>& reference,
                                                const std::vector<ReferenceOutput>* calibration) {
  std::vector<TrivialOutput> trivials;
  trivials.push_back(constant("zeros", reference, 0.0));
  trivials.push_back(constant("ones", reference, 1.0));

  if (calibration != nullptr) {
    TrivialOutput mean{"the reference's mean", {}};
    for (size_t o = 0; o < reference.size(); ++o) {
      mean.outputs.push_back(filled_like(reference[o].native, finite_mean((*calibration)[o].native)));
    }
    trivials.push_back(std::move(mean));
    TrivialOutput other{"the output for other inputs", {}};
    for (const ReferenceOutput& out : *calibration) other.outputs.push_back(out.native);
    trivials.push_back(std::move(other));
  }

  for (size_t p = 0; p < func->params.size(); ++p) {
    if (func->params[p].role != ir::ParamRole::kInput) continue;
    const tensor::HostTensor& input = args[p];
    TrivialOutput passed{"input " + func->params[p].buffer->name + " passed through", {}};
    bool any = false;
    for (const ReferenceOutput& out : reference) {
      tensor::HostTensor t = filled_like(out.native, 0.0);
      if (input.num_elements() == t.num_elements()) {
        for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, input.get(i));
        any = true;
      }
      passed.outputs.push_back(std::move(t));
    }
    if (any) trivials.push_back(std::move(passed));
  }
  return trivials;
}

bool passes_our_check(const TrivialOutput& trivial, const std::vector<ReferenceOutput>& reference) {
  for (size_t o = 0; o < reference.size(); ++o) {
    const ReferenceOutput& ref = reference[o];
    if (!compare_output(ref.native, ref.exact, trivial.outputs[o], ref.tolerance).ok()) return false;
  }
  return true;
}

}  // namespace dragon::harness
