// Shared helpers for operator tests: run an op spec on the interpreter and compare its
// outputs with a plain C++ reference computed in the test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/interp/input_generator.h"
#include "dragon/interp/interpreter.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::ops::testing {

struct OpRun {
  Workload workload;
  std::vector<tensor::HostTensor> args;  // one per parameter, outputs filled by the run

  // The i-th parameter with role output (or inout).
  const tensor::HostTensor& output(int i = 0) const {
    int seen = 0;
    for (size_t p = 0; p < workload.func->params.size(); ++p) {
      if (workload.func->params[p].role == ir::ParamRole::kInput) continue;
      if (seen++ == i) return args[p];
    }
    throw std::out_of_range("no output " + std::to_string(i));
  }
  // The i-th parameter, input or output.
  const tensor::HostTensor& arg(int i) const { return args.at(i); }
};

inline OpRun run_op(std::string_view spec, uint64_t seed = 1,
                    interp::Distribution distribution = interp::Distribution::kNormal) {
  OpRun run{ops::OpRegistry::global().make_workload(spec), {}};
  run.args = interp::make_arguments(run.workload.func, seed, distribution);
  interp::run(run.workload.func, run.args);
  return run;
}

// The message of the UserError that making `spec` throws; "(no error)" when it builds, and
// any other exception labelled as not a user error (bad specs must fail as user errors).
inline std::string user_error_of(std::string_view spec) {
  try {
    OpRegistry::global().make_workload(spec);
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a user error) ") + e.what();
  }
  return "(no error)";
}

// `value` rounded to `dtype` (through a one-element tensor of that type).
inline double round_to(ir::DataType dtype, double value) {
  tensor::HostTensor one(dtype, {1});
  one.set(0, value);
  return one.get(0);
}

// The block named `name` under `s` (through loops, sequences and other blocks), or nullptr.
inline const ir::BlockNode* find_block(const ir::Stmt& s, std::string_view name) {
  if (const auto* realize = s.as<ir::BlockRealizeNode>()) {
    if (realize->block->name == name) return realize->block.get();
    return find_block(realize->block->body, name);
  }
  if (const auto* loop = s.as<ir::ForNode>()) return find_block(loop->body, name);
  if (const auto* seq = s.as<ir::SeqStmtNode>()) {
    for (const ir::Stmt& child : seq->seq) {
      if (const auto* b = find_block(child, name)) return b;
    }
  }
  return nullptr;
}
inline const ir::BlockNode* find_block(const ir::PrimFunc& func, std::string_view name) {
  return find_block(func->body, name);
}

inline std::vector<double> to_doubles(const tensor::HostTensor& t) {
  std::vector<double> values(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) values[i] = t.get(i);
  return values;
}

// How close a result must be: within atol + rtol * |expected| (all_close).
struct Tolerance {
  double rtol;
  double atol;
};

// Every element within atol + rtol * |expected|; NaN only where expected is NaN.
// Reports the first few mismatches with their flat indices.
inline ::testing::AssertionResult all_close(const tensor::HostTensor& actual, const std::vector<double>& expected,
                                            double rtol = 1e-5, double atol = 1e-6) {
  if (actual.num_elements() != static_cast<int64_t>(expected.size())) {
    return ::testing::AssertionFailure() << "size " << actual.num_elements() << " vs expected " << expected.size();
  }
  int mismatches = 0;
  std::string report;
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    double a = actual.get(i), e = expected[i];
    bool ok = std::isnan(e) ? std::isnan(a) : (!std::isnan(a) && std::fabs(a - e) <= atol + rtol * std::fabs(e));
    if (std::isinf(e) && a == e) ok = true;
    if (!ok) {
      if (mismatches < 8) report += "\n  [" + std::to_string(i) + "] actual " + std::to_string(a) + " expected " +
                                    std::to_string(e);
      ++mismatches;
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches << " of " << expected.size() << " elements differ" << report;
}

}  // namespace dragon::ops::testing
