// Sampling instructions: sample_perfect_tile and sample_categorical. Their decisions are
// recorded in the trace, so replay reproduces them and search can change them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "../instruction_apply.h"
#include "../ir_tree.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// Prime factorization by trial division: extents are small enough.
std::vector<std::pair<int64_t, int>> factorize(int64_t n) {
  std::vector<std::pair<int64_t, int>> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    int e = 0;
    while (n % p == 0) {
      n /= p;
      ++e;
    }
    if (e) out.emplace_back(p, e);
  }
  if (n > 1) out.emplace_back(n, 1);
  return out;
}

// n factors of `extent`, each prime's exponent spread uniformly over the n slots (a
// uniform composition, "stars and bars").
std::vector<int64_t> sample_tile(RandomEngine& rng, int64_t extent, int n) {
  std::vector<int64_t> result(n, 1);
  for (auto [p, e] : factorize(extent)) {
    std::vector<int64_t> bars = rng.sample_without_replacement(e + n - 1, n - 1);
    std::sort(bars.begin(), bars.end());
    bars.push_back(e + n - 1);
    int64_t last = -1;
    for (int i = 0; i < n; ++i) {
      int64_t count = bars[i] - last - 1;
      last = bars[i];
      for (int64_t k = 0; k < count; ++k) result[i] *= p;
    }
  }
  return result;
}

}  // namespace

std::vector<int64_t> repair_perfect_tile(std::vector<int64_t> factors, int64_t extent) {
  // Innermost first: keep each factor that still divides what is left, else give that
  // slot everything left; the outermost takes the rest.
  int64_t left = extent;
  for (size_t i = factors.size(); i-- > 1;) {
    if (factors[i] <= 0 || left % factors[i] != 0) factors[i] = left;
    left /= factors[i];
  }
  if (!factors.empty()) factors[0] = left;
  return factors;
}

std::vector<ExprRV> Schedule::sample_perfect_tile(LoopRV loop_rv, int n, int max_innermost_factor,
                                                  std::optional<std::vector<int64_t>> decision) {
  constexpr InstructionKind kKind = InstructionKind::SamplePerfectTile;
  const ForNode* loop = resolve(loop_rv, kKind, "loop");
  const ErrorLocus here{loop->loop_var.get(), {}};
  if (n < 1) throw error(kKind, 1, "InvalidTileCount", fmt::format("n = {}", n), "n must be at least 1", here);
  auto extent = as_const_int(loop->extent);
  if (!extent || *extent < 1) {
    throw error(kKind, 2, "NonConstantExtent", fmt::format("loop {}", rv_name(loop_rv)),
                fmt::format("the extent {} is not a constant >= 1", print_expr(loop->extent)), here);
  }
  if (max_innermost_factor != -1 && max_innermost_factor < 1) {
    throw error(kKind, 3, "InvalidMaxInnermost", fmt::format("max_innermost_factor = {}", max_innermost_factor),
                "must be -1 (unbounded) or at least 1", here);
  }
  std::vector<int64_t> factors;
  if (decision) {
    if (static_cast<int>(decision->size()) != n) {
      throw error(kKind, 4, "WrongDecisionLength", "decision",
                  fmt::format("the decision has {} factors, n is {}", decision->size(), n), here);
    }
    factors = repair_perfect_tile(*decision, *extent);
  } else if (n == 1) {
    factors = {*extent};
  } else {
    // Rejection as in TVM; after many misses (an innermost bound no composition is
    // likely to meet), move the innermost factor to the outermost slot instead.
    for (int attempt = 0;; ++attempt) {
      factors = sample_tile(rng_, *extent, n);
      if (max_innermost_factor == -1 || factors.back() <= max_innermost_factor) break;
      if (attempt == 10000) {
        factors.front() *= factors.back();
        factors.back() = 1;
        break;
      }
    }
  }
  std::vector<ExprRV> outputs;
  for (int64_t f : factors) outputs.push_back(new_expr_rv(f));
  Instruction inst{kKind, {loop_rv}, {int64_t{n}, int64_t{max_innermost_factor}}, {}};
  for (ExprRV v : outputs) inst.outputs.push_back(v);
  record(std::move(inst), Arg::int_list(factors));
  return outputs;
}

ExprRV Schedule::sample_categorical(std::vector<int64_t> candidates, std::vector<double> probs,
                                    std::optional<int64_t> decision) {
  constexpr InstructionKind kKind = InstructionKind::SampleCategorical;
  double total = 0;
  bool valid = !candidates.empty() && candidates.size() == probs.size();
  for (double p : probs) {
    valid &= std::isfinite(p) && p >= 0;
    total += p;
  }
  if (!valid || !(total > 0)) {
    throw error(kKind, 1, "InvalidDistribution", "probs",
                fmt::format("{} candidates with {} probabilities summing to {}", candidates.size(), probs.size(), total));
  }
  int64_t index;
  if (decision) {
    if (*decision < 0 || *decision >= static_cast<int64_t>(candidates.size())) {
      throw error(kKind, 2, "InvalidDecision", "decision",
                  fmt::format("index {} is not in [0, {})", *decision, candidates.size()));
    }
    index = *decision;
  } else {
    index = rng_.categorical(probs);
  }
  ExprRV out = new_expr_rv(candidates[index]);
  record(Instruction{kKind, {}, {Arg::int_list(candidates), Arg::float_list(probs)}, {out}}, Arg(index));
  return out;
}

namespace detail {

std::vector<RandomVar> apply_sample_perfect_tile(Schedule& sch, const std::vector<Arg>& inputs,
                                                 const std::vector<Arg>& attrs, const std::optional<Arg>& decision) {
  constexpr InstructionKind kKind = InstructionKind::SamplePerfectTile;
  expect_count(kKind, "inputs", inputs, 1);
  expect_count(kKind, "attrs", attrs, 2);
  std::optional<std::vector<int64_t>> d;
  if (decision) d = int_list_arg(kKind, *decision);
  return as_outputs(sch.sample_perfect_tile(loop_arg(kKind, inputs[0]), static_cast<int>(int_arg(kKind, attrs[0])),
                                            static_cast<int>(int_arg(kKind, attrs[1])), d));
}

std::vector<RandomVar> apply_sample_categorical(Schedule& sch, const std::vector<Arg>& inputs,
                                                const std::vector<Arg>& attrs, const std::optional<Arg>& decision) {
  constexpr InstructionKind kKind = InstructionKind::SampleCategorical;
  expect_count(kKind, "inputs", inputs, 0);
  expect_count(kKind, "attrs", attrs, 2);
  std::optional<int64_t> d;
  if (decision) d = int_arg(kKind, *decision);
  return {sch.sample_categorical(int_list_arg(kKind, attrs[0]), float_list_arg(kKind, attrs[1]), d)};
}

}  // namespace detail
}  // namespace dragon::schedule
