// Helpers for lowering tests (lower_test_util.h).
#include "lower_test_util.h"

#include <cmath>
#include <algorithm>
#include <cstring>
#include <sstream>

#include "dragon/interp/input_generator.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/interp/interpreter.h"
#include "dragon/support/error.h"

namespace dragon::lower::testing {

tensor::HostTensor reshaped(const tensor::HostTensor& tensor, const std::vector<int64_t>& shape) {
  tensor::HostTensor result(tensor.dtype(), shape);
  EXPECT_EQ(result.size_bytes(), tensor.size_bytes()) << "reshaping changes the element count";
  if (result.size_bytes() == tensor.size_bytes()) std::memcpy(result.data(), tensor.data(), tensor.size_bytes());
  return result;
}

std::vector<tensor::HostTensor> run_reshaped(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& args) {
  std::vector<tensor::HostTensor> shaped;
  for (size_t p = 0; p < func->params.size(); ++p) shaped.push_back(reshaped(args[p], func->params[p].buffer->shape));
  interp::run(func, shaped);
  std::vector<tensor::HostTensor> result;
  for (size_t p = 0; p < shaped.size(); ++p) result.push_back(reshaped(shaped[p], args[p].shape()));
  return result;
}

::testing::AssertionResult same_bytes(const ir::PrimFunc& func, const std::vector<tensor::HostTensor>& expected,
                                      const std::vector<tensor::HostTensor>& actual) {
  for (size_t p = 0; p < func->params.size(); ++p) {
    if (func->params[p].role == ir::ParamRole::kInput) continue;
    const tensor::HostTensor& e = expected[p];
    const tensor::HostTensor& a = actual[p];
    if (e.size_bytes() == a.size_bytes() && std::memcmp(e.data(), a.data(), e.size_bytes()) == 0) continue;
    for (int64_t i = 0; i < e.num_elements(); ++i) {
      double x = e.get(i), y = a.get(i);
      if (!(x == y || (std::isnan(x) && std::isnan(y)))) {
        return ::testing::AssertionFailure() << "output " << func->params[p].buffer->name << " differs at [" << i
                                             << "]: expected " << x << ", got " << y;
      }
    }
    return ::testing::AssertionFailure() << "output " << func->params[p].buffer->name << " differs in its bytes";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult computes_the_same(const ir::PrimFunc& before, const ir::PrimFunc& after, uint64_t seed) {
  std::vector<tensor::HostTensor> inputs = interp::make_arguments(before, seed, interp::Distribution::kNormal);
  return same_bytes(before, run_reshaped(before, inputs), run_reshaped(after, inputs));
}

ir::PrimFunc small_workload(const ops::OpKind& op, int64_t max_extent) {
  std::string spec = op.name + ":";
  for (const ops::OpParam& param : op.params) {
    if (!param.default_value) continue;
    ops::ParamValue value = *param.default_value;
    if (auto* shape = std::get_if<std::vector<int64_t>>(&value)) {
      for (int64_t& extent : *shape) extent = std::min(extent, max_extent);
    } else if (auto* number = std::get_if<int64_t>(&value)) {
      *number = std::min(*number, max_extent);
    }
    spec += (spec.back() == ':' ? "" : ",") + param.name + "=" + ops::format_param_value(value);
  }
  try {
    return ops::OpRegistry::global().make_workload(spec).func;
  } catch (const UserError&) {
    return ops::OpRegistry::global().make_workload(op.name).func;
  }
}

int loads_of(const ir::PrimFunc& func, const std::string& buffer) {
  struct Counter : ir::StmtExprVisitor {
    std::string name;
    int count = 0;
    void visit_(const ir::BufferLoadNode* op) override {
      count += op->buffer->name == name ? 1 : 0;
      ir::StmtExprVisitor::visit_(op);
    }
  } counter;
  counter.name = buffer;
  counter.visit(func->body);
  return counter.count;
}

int64_t allocated_elements(const ir::PrimFunc& func, const std::string& buffer) {
  struct Finder : ir::StmtVisitor {
    std::string name;
    int64_t elements = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::AllocateNode* op) override {
      if (op->buffer->name == name) {
        elements = 1;
        for (const ir::Expr& extent : op->buffer->shape) {
          std::optional<int64_t> n = ir::as_const_int(extent);
          if (!n) ADD_FAILURE() << name << " has a symbolic shape";
          elements *= n.value_or(0);
        }
      }
      ir::StmtVisitor::visit_(op);
    }
  } finder;
  finder.name = buffer;
  finder.visit(func->body);
  return finder.elements;
}

std::vector<Stage> lower_stages(const ir::PrimFunc& func, const Target& target, Lowered* result) {
  std::vector<Stage> stages{{"input", func, false}};
  LowerOptions options;
  options.after_pass = [&](const std::string& pass, const ir::PrimFunc& after, bool changed) {
    stages.push_back({pass, after, changed});
  };
  Lowered lowered = lower(func, target, options);
  if (result != nullptr) *result = std::move(lowered);
  return stages;
}

::testing::AssertionResult has_exact_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    size_t start = l.find_first_not_of(' ');
    if (start != std::string::npos && l.substr(start) == line) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no line '" << line << "' in:\n" << text;
}

}  // namespace dragon::lower::testing
