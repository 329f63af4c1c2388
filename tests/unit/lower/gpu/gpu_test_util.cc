// Helpers for the GPU lowering tests (gpu_test_util.h).
#include "gpu_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "dragon/interp/input_generator.h"

#include "dragon/ir/functor.h"
#include "dragon/ir/printer.h"
#include "unit/lower/lower_test_util.h"

namespace dragon::lower::testing {

ir::PrimFunc gpu_stage(const ir::PrimFunc& func, const std::string& pass) {
  for (const Stage& s : lower_stages(func, Target::cuda_h200())) {
    if (s.pass == pass) return s.func;
  }
  ADD_FAILURE() << "no pass " << pass;
  return func;
}

::testing::AssertionResult close_outputs(const ir::PrimFunc& before, const ir::PrimFunc& after, uint64_t seed) {
  std::vector<tensor::HostTensor> inputs = interp::make_arguments(before, seed, interp::Distribution::kNormal);
  std::vector<tensor::HostTensor> expected = run_reshaped(before, inputs);
  std::vector<tensor::HostTensor> actual = run_reshaped(after, inputs);
  for (size_t p = 0; p < before->params.size(); ++p) {
    if (before->params[p].role == ir::ParamRole::kInput) continue;
    double scale = 0;
    for (int64_t i = 0; i < expected[p].num_elements(); ++i) {
      double x = expected[p].get(i);
      if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
    }
    double tolerance = 1e-4 * std::max(scale, 1.0);
    for (int64_t i = 0; i < expected[p].num_elements(); ++i) {
      double x = expected[p].get(i), y = actual[p].get(i);
      bool ok = std::isnan(x) ? std::isnan(y) : (x == y || std::fabs(x - y) <= tolerance);
      if (!ok) {
        return ::testing::AssertionFailure() << "output " << before->params[p].buffer->name << " differs at [" << i
                                             << "]: expected " << x << ", got " << y;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

int count_syncs(const ir::Stmt& stmt) {
  struct Counter : ir::StmtVisitor {
    int n = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::EvaluateNode* op) override {
      const auto* call = op->value.as<ir::CallNode>();
      if (call != nullptr && call->op == ir::Intrinsic::SyncThreads) ++n;
    }
  } c;
  c.visit(stmt);
  return c.n;
}

std::string body_text(const ir::PrimFunc& func) { return ir::print_function(func); }

}  // namespace dragon::lower::testing
