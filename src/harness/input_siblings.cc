// Siblings of input sets (input_siblings.h): which inputs, which elements, which values,
// each change kept inside its input's domain.
#include "dragon/harness/input_siblings.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "dragon/harness/seed_sequence.h"
#include "dragon/support/error.h"

namespace dragon::harness {
namespace {

using Kind = ir::ValueDomain::Kind;

constexpr int64_t kManyChanges = 4;

// The elements along the last axis that share a row with `index` (a simplex's rows).
int64_t row_length(const tensor::HostTensor& tensor) { return tensor.shape().empty() ? 1 : tensor.shape().back(); }

// What a change may do to one element of an input, given its domain. For floats of a real
// domain the value crosses zero and grows: it survives rounding to any float type and
// reaches outputs that clamp at zero.
double changed_value(const tensor::HostTensor& tensor, int64_t index, const ir::ValueDomain& domain,
                     SeedSequence& random) {
  const ir::DataType dtype = tensor.dtype();
  if (domain.kind == Kind::kIntRange) {
    // Another value of [lo, hi), any of them.
    const auto span = static_cast<uint64_t>(domain.hi - domain.lo);
    const auto at = static_cast<uint64_t>(tensor.get_int(index) - domain.lo);
    return static_cast<double>(domain.lo + static_cast<int64_t>((at + 1 + random.below(span - 1)) % span));
  }
  if (dtype.is_bool()) return tensor.get_int(index) != 0 ? 0.0 : 1.0;
  if (dtype.is_int()) {
    // The generator's small integers ([-8, 8), positive: [1, 8]) stay in their range.
    const int64_t v = tensor.get_int(index);
    return static_cast<double>(domain.kind == Kind::kPositive ? v % 8 + 1 : -(v + 1));
  }
  const double v = tensor.get(index);
  if (domain.kind == Kind::kPositive) return 1.5 * v + 1;
  return -(1.5 * v + std::copysign(1.0, v));
}

// `wanted` distinct positions of `tensor` drawn from `random`.
std::vector<int64_t> distinct_positions(const tensor::HostTensor& tensor, int64_t wanted, SeedSequence& random) {
  std::vector<int64_t> positions;
  while (static_cast<int64_t>(positions.size()) < wanted) {
    auto index = static_cast<int64_t>(random.below(static_cast<uint64_t>(tensor.num_elements())));
    if (std::find(positions.begin(), positions.end(), index) == positions.end()) positions.push_back(index);
  }
  return positions;
}

// A simplex keeps its rows' sums: `swaps` pairs of elements of one row exchange values
// (pairs whose values differ, so that something changes; none where every row is flat).
std::vector<ElementChange> simplex_swaps(size_t param, const tensor::HostTensor& tensor, int64_t swaps,
                                         SeedSequence& random) {
  const int64_t row = row_length(tensor);
  std::vector<ElementChange> changes;
  std::vector<int64_t> used;
  auto is_used = [&](int64_t i) { return std::find(used.begin(), used.end(), i) != used.end(); };
  for (int attempt = 0; attempt < 64 && static_cast<int64_t>(changes.size()) < 2 * swaps; ++attempt) {
    auto i = static_cast<int64_t>(random.below(static_cast<uint64_t>(tensor.num_elements())));
    auto j = i - i % row + static_cast<int64_t>(random.below(static_cast<uint64_t>(row)));
    if (i == j || is_used(i) || is_used(j) || tensor.get(i) == tensor.get(j)) continue;
    changes.push_back({param, i, tensor.get(j)});
    changes.push_back({param, j, tensor.get(i)});
    used.push_back(i);
    used.push_back(j);
  }
  return changes;
}

// Offsets keep their first (0) and last (the total) entries, their order and their
// largest step: up to `moves` inner boundaries, no two adjacent, each move by one, so
// that an element passes from one bag to its neighbour. None when no boundary may move.
std::vector<ElementChange> offsets_moves(size_t param, const tensor::HostTensor& tensor, const ir::ValueDomain& domain,
                                         int64_t moves, SeedSequence& random) {
  struct Move {
    int64_t index;
    int64_t value;
  };
  std::vector<Move> possible;
  for (int64_t i = 1; i + 1 < tensor.num_elements(); ++i) {
    const int64_t before = tensor.get_int(i - 1), at = tensor.get_int(i), after = tensor.get_int(i + 1);
    if (at - 1 >= before && after - (at - 1) <= domain.max_len) possible.push_back({i, at - 1});
    if (at + 1 <= after && (at + 1) - before <= domain.max_len) possible.push_back({i, at + 1});
  }
  // Boundaries apart from each other move independently: each move's neighbours stay.
  std::vector<ElementChange> changes;
  auto near_a_move = [&](int64_t i) {
    return std::any_of(changes.begin(), changes.end(), [&](const ElementChange& c) { return std::abs(c.index - i) <= 1; });
  };
  for (int attempt = 0; attempt < 64 && !possible.empty() && static_cast<int64_t>(changes.size()) < moves; ++attempt) {
    const Move& move = possible[random.below(possible.size())];
    if (!near_a_move(move.index)) changes.push_back({param, move.index, static_cast<double>(move.value)});
  }
  return changes;
}

// The changes of one sibling of `tensor` (parameter `param`): one or `kManyChanges`
// elements, as its domain allows. Empty when the domain allows none here.
std::vector<ElementChange> sibling_changes(const ir::Param& parameter, size_t param, const tensor::HostTensor& tensor,
                                           bool many, SeedSequence& random) {
  const ir::ValueDomain& domain = parameter.domain;
  if (domain.kind == Kind::kSimplex) return simplex_swaps(param, tensor, many ? kManyChanges / 2 : 1, random);
  if (domain.kind == Kind::kOffsets) return offsets_moves(param, tensor, domain, many ? kManyChanges : 1, random);
  const int64_t wanted = std::min<int64_t>(many ? kManyChanges : 1, tensor.num_elements());
  std::vector<ElementChange> changes;
  for (int64_t index : distinct_positions(tensor, wanted, random)) {
    changes.push_back({param, index, changed_value(tensor, index, domain, random)});
  }
  return changes;
}

}  // namespace

std::vector<size_t> perturbable_inputs(const ir::PrimFunc& func) {
  std::vector<size_t> inputs;
  for (size_t p = 0; p < func->params.size(); ++p) {
    const ir::Param& param = func->params[p];
    int64_t elements = 1;
    for (int64_t extent : param.buffer->shape) elements *= extent;
    if (param.role != ir::ParamRole::kInput || elements == 0) continue;
    const ir::DataType dtype = param.buffer->dtype;
    bool changeable = false;
    switch (param.domain.kind) {
      case Kind::kReal: changeable = true; break;
      case Kind::kPositive: changeable = !dtype.is_bool(); break;  // a positive bool is always 1
      case Kind::kIntRange: changeable = param.domain.hi - param.domain.lo >= 2; break;
      case Kind::kSimplex: changeable = dtype.is_float() && !param.buffer->shape.empty() && param.buffer->shape.back() >= 2; break;
      case Kind::kOffsets: changeable = elements >= 3; break;
    }
    if (changeable) inputs.push_back(p);
  }
  return inputs;
}

std::vector<InputSibling> make_siblings(const ir::PrimFunc& func,
                                        const std::vector<std::vector<tensor::HostTensor>>& bases,
                                        const std::vector<std::string>& labels, uint64_t seed, int count) {
  DRAGON_CHECK(bases.size() == labels.size(), "make_siblings: {} base sets, {} labels", bases.size(), labels.size());
  std::vector<size_t> inputs = perturbable_inputs(func);
  std::vector<InputSibling> siblings;
  if (inputs.empty() || bases.empty() || count <= 0) return siblings;
  // Every input gets two siblings of its own (one element, then several), however many
  // inputs there are: a key covering a fraction f of the input escapes both with
  // probability about 4 f^2.
  const int total = std::max(count, 2 * static_cast<int>(inputs.size()));
  SeedSequence random(seed);
  for (int j = 0; j < total; ++j) {
    InputSibling sibling;
    sibling.base = static_cast<size_t>(j) % bases.size();
    const size_t param = inputs[static_cast<size_t>(j) % inputs.size()];
    const ir::Param& parameter = func->params[param];
    // Each input's first sibling changes one element (what a sparse key misses most
    // often), its second several.
    const bool many = (static_cast<size_t>(j) / inputs.size()) % 2 == 1;
    sibling.changes = sibling_changes(parameter, param, bases[sibling.base][param], many, random);
    if (sibling.changes.empty()) continue;  // offsets that cannot move, a flat simplex
    const size_t changed = sibling.changes.size();
    sibling.label = fmt::format("{}, sibling {} ({} element{} of {} changed)", labels[sibling.base], j + 1, changed,
                                changed == 1 ? "" : "s", parameter.buffer->name);
    siblings.push_back(std::move(sibling));
  }
  return siblings;
}

void apply_sibling(const InputSibling& sibling, std::vector<tensor::HostTensor>& args) {
  for (const ElementChange& change : sibling.changes) {
    DRAGON_CHECK(change.param < args.size() && change.index < args[change.param].num_elements(),
                 "a sibling's change lies outside its arguments");
    args[change.param].set(change.index, change.value);
  }
}

}  // namespace dragon::harness
