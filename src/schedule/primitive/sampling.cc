// Sampling instructions: sample_perfect_tile, sample_categorical and
// sample_compute_location. Their decisions are recorded in the trace, so replay reproduces
// them and search can change them. What compute_at does with a sampled location is in
// compute_at.cc.
#include <algorithm>
#include <cmath>
#include <functional>

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


// How the blocks directly under a loop use its variable (TVM's GetLoopIterType): in
// spatial bindings only, in reduce ones only, or otherwise (both, ordered or opaque).
enum class LoopUse { kDataParallel, kReduce, kOther };

LoopUse loop_use(const ForNode* loop) {
  int spatial = 0, reduce = 0, other = 0;
  const std::vector<const VarNode*> var{loop->loop_var.get()};
  for (const BlockRealizeNode* r : detail::child_block_realizes(loop->body)) {
    const BlockNode* b = r->block.get();
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      if (!detail::uses_any_var(r->iter_values[i], var)) continue;
      switch (b->iter_vars[i].kind) {
        case IterKind::kSpatial: ++spatial; break;
        case IterKind::kReduce: ++reduce; break;
        default: ++other; break;
      }
    }
  }
  if (other > 0 || (spatial > 0 && reduce > 0)) return LoopUse::kOther;
  return reduce > 0 ? LoopUse::kReduce : LoopUse::kDataParallel;
}

// The blocks of `block`'s scope that run after it and read or write a buffer it writes
// (TVM's consumers: read-after-write and write-after-write), in program order.
std::vector<const BlockNode*> later_dependents(const BlockNode* block, const BlockNode* scope) {
  std::vector<const BlockNode*> result;
  bool after = false;
  for (const BlockRealizeNode* r : detail::child_block_realizes(Stmt(scope))) {
    const BlockNode* other = r->block.get();
    if (other == block) {
      after = true;
      continue;
    }
    if (!after) continue;
    bool depends = false;
    for (const BufferRegion& w : block->writes) {
      for (const auto* list : {&other->reads, &other->writes}) {
        for (const BufferRegion& a : *list) depends |= a.buffer.get() == w.buffer.get();
      }
    }
    if (depends) result.push_back(other);
  }
  return result;
}

// The deepest loop enclosing every block of `blocks` with no block between it and them
// (TVM's lowest common ancestor of the consumers, when it is a loop), or nullptr.
const ForNode* innermost_common_loop(const PrimFunc& func, const std::vector<const BlockNode*>& blocks) {
  std::vector<std::vector<const StmtNode*>> paths;
  for (const BlockNode* b : blocks) {
    std::vector<const StmtNode*> path = detail::path_to(func, b);
    path.resize(path.size() - 2);  // above the realization
    paths.push_back(std::move(path));
  }
  size_t common = paths[0].size();
  for (const auto& path : paths) {
    size_t i = 0;
    while (i < common && i < path.size() && path[i] == paths[0][i]) ++i;
    common = i;
  }
  for (size_t i = common; i-- > 0;) {
    const StmtNode* n = paths[0][i];
    if (n->kind == NodeKind::For) return static_cast<const ForNode*>(n);
    if (n->kind == NodeKind::Block || n->kind == NodeKind::BlockRealize) return nullptr;
  }
  return nullptr;
}

// The messages an attempt to use a location mark as a loop gives ("loop l5 was replaced
// by ..."): the marks stand for no loop.
constexpr const char* kRootMark = "SampleComputeLocation's root mark (only compute_at and reverse_compute_at take it)";
constexpr const char* kInlineMark =
    "SampleComputeLocation's inline mark (only compute_at and reverse_compute_at take it)";

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


LoopRV Schedule::sample_compute_location(BlockRV block_rv, std::optional<int64_t> decision) {
  constexpr InstructionKind kKind = InstructionKind::SampleComputeLocation;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  // Candidates as TVM collects them, in increasing index order: inline (-2) when
  // compute_inline would succeed, root (-1), then positions i in the first consumer's loops,
  // down to the innermost loop holding every consumer, where compute_at would succeed,
  // skipping unit loops and stopping at a data-parallel loop below a reduce one or at a
  // reduce loop below the last data-parallel one. Trials run on copies of the schedule:
  // the IR is shared, only the symbol table and trace are copied.
  auto would_succeed = [&](const std::function<void(Schedule&)>& primitive) {
    Schedule trial = copy();
    try {
      primitive(trial);
      return true;
    } catch (const ScheduleError&) {
      return false;
    }
  };
  std::vector<int64_t> indices;
  std::vector<Var> loop_vars;  // undefined for the marks
  if (would_succeed([&](Schedule& t) { t.compute_inline(block_rv); })) {
    indices.push_back(-2);
    loop_vars.emplace_back();
  }
  indices.push_back(-1);
  loop_vars.emplace_back();
  const std::vector<const StmtNode*> block_path = detail::path_to(func_, block);
  const BlockNode* scope = detail::scope_block(block_path);
  std::vector<const BlockNode*> consumers =
      scope == nullptr ? std::vector<const BlockNode*>{} : later_dependents(block, scope);
  const ForNode* boundary = consumers.empty() ? nullptr : innermost_common_loop(func_, consumers);
  if (boundary != nullptr) {
    const std::vector<const ForNode*> loops = detail::loops_above(detail::path_to(func_, consumers[0]));
    const size_t count = std::find(loops.begin(), loops.end(), boundary) - loops.begin() + 1;
    DRAGON_CHECK(count <= loops.size());
    std::vector<LoopUse> uses;
    int64_t last_data_parallel = -1;
    for (size_t i = 0; i < count; ++i) {
      uses.push_back(loop_use(loops[i]));
      if (uses[i] == LoopUse::kDataParallel) last_data_parallel = static_cast<int64_t>(i);
    }
    bool seen_reduce = false;
    for (size_t i = 0; i < count; ++i) {
      if (is_const_int(loops[i]->extent, 1)) continue;
      if (uses[i] == LoopUse::kDataParallel) {
        if (seen_reduce) break;
      } else {
        seen_reduce = true;
        if (static_cast<int64_t>(i) > last_data_parallel) break;
      }
      const Var var = loops[i]->loop_var;
      if (would_succeed([&](Schedule& t) { t.compute_at(block_rv, t.new_loop_rv(var), true, -1); })) {
        indices.push_back(static_cast<int64_t>(i));
        loop_vars.push_back(var);
      }
    }
  }
  // A given decision that is no longer a candidate becomes the nearest candidate below it,
  // root when there is none (TVM's repair).
  size_t chosen;
  if (decision) {
    auto it = std::lower_bound(indices.begin(), indices.end(), *decision);
    if (it != indices.end() && *it == *decision) {
      chosen = it - indices.begin();
    } else if (it != indices.begin()) {
      chosen = it - indices.begin() - 1;
    } else {
      chosen = std::find(indices.begin(), indices.end(), int64_t{-1}) - indices.begin();
    }
  } else {
    chosen = static_cast<size_t>(rng_.uniform_int(0, static_cast<int64_t>(indices.size())));
  }
  LoopRV out;
  if (indices[chosen] >= 0) {
    out = new_loop_rv(loop_vars[chosen]);
  } else {
    // A loop entry without a loop: compute_at recognizes the mark by its value, and
    // every other primitive refuses it as an invalidated loop (precondition 0).
    SymbolEntry mark;
    mark.type = RVType::kLoop;
    mark.value = indices[chosen];
    mark.invalidated_by = indices[chosen] == -1 ? kRootMark : kInlineMark;
    out = LoopRV{new_rv(std::move(mark)).id};
  }
  record(Instruction{kKind, {block_rv}, {}, {out}}, Arg(indices[chosen]));
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

std::vector<RandomVar> apply_sample_compute_location(Schedule& sch, const std::vector<Arg>& inputs,
                                                     const std::vector<Arg>& attrs, const std::optional<Arg>& decision) {
  constexpr InstructionKind kKind = InstructionKind::SampleComputeLocation;
  expect_count(kKind, "inputs", inputs, 1);
  expect_count(kKind, "attrs", attrs, 0);
  std::optional<int64_t> d;
  if (decision) d = int_arg(kKind, *decision);
  return {sch.sample_compute_location(block_arg(kKind, inputs[0]), d)};
}

}  // namespace detail
}  // namespace dragon::schedule
