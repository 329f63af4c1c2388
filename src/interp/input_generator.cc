// Deterministic arguments for a PrimFunc: each input drawn from its own random stream
// (seed, parameter index) within its value domain; outputs filled with sentinels. Not a
// checker: comparing outputs lives with the references.
#include "dragon/interp/input_generator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "dragon/support/error.h"
#include "portable_math.h"
#include "rng.h"

namespace dragon::interp {
namespace {

struct DistributionName {
  Distribution distribution;
  std::string_view name;
};
constexpr DistributionName kDistributionNames[] = {
    {Distribution::kNormal, "normal"}, {Distribution::kUniform, "uniform"}, {Distribution::kRand, "rand"},
    {Distribution::kOffset, "offset"}, {Distribution::kEdge, "edge"},
};

// The byte every element of an integer output starts as: 0x5a5a... reads as a large,
// obviously wrong value.
constexpr uint8_t kGarbageByte = 0x5a;

double draw_real(Rng& rng, Distribution distribution) {
  switch (distribution) {
    case Distribution::kNormal: return rng.normal();
    case Distribution::kUniform: return 2 * rng.uniform() - 1;
    case Distribution::kRand: return rng.uniform();
    case Distribution::kOffset: return 100 + rng.normal();
    case Distribution::kEdge: {
      // Special values each with probability 1/10, ordinary normals the remaining 2/10.
      constexpr double kSpecial[] = {0.0, -0.0, 1.0, -1.0, 1e-6, -1e-6, 1e3, -1e3};
      uint64_t pick = rng.below(10);
      return pick < 8 ? kSpecial[pick] : rng.normal();
    }
  }
  DRAGON_UNREACHABLE("distribution");
}

std::string describe(const ir::Param& param, const ir::PrimFunc& func) {
  return fmt::format("parameter {} ({}, {}) of {}", param.buffer->name, ir::to_string(param.buffer->dtype),
                     ir::param_role_name(param.role), func->name);
}

void fill_real(tensor::HostTensor& t, Rng& rng, Distribution distribution, const ir::Param& param) {
  ir::DataType dtype = t.dtype();
  if (dtype.is_bool()) {
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set_int(i, static_cast<int64_t>(rng.next() >> 63));
  } else if (dtype.is_int()) {
    // Small integers: distributions describe floats; ints get a range every op tolerates.
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set_int(i, static_cast<int64_t>(rng.below(16)) - 8);
  } else {
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, draw_real(rng, distribution));
  }
}

void fill_positive(tensor::HostTensor& t, Rng& rng, Distribution distribution) {
  if (t.dtype().is_int() || t.dtype().is_bool()) {
    for (int64_t i = 0; i < t.num_elements(); ++i) t.set_int(i, static_cast<int64_t>(rng.below(8)) + 1);
    return;
  }
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, std::fabs(draw_real(rng, distribution)) + 0.1);
}

void fill_simplex(tensor::HostTensor& t, Rng& rng, const ir::Param& param, const ir::PrimFunc& func) {
  if (!t.dtype().is_float()) {
    throw UserError(fmt::format("{}: a simplex domain needs a float type", describe(param, func)));
  }
  int64_t row = t.shape().empty() ? 1 : t.shape().back();
  if (row == 0) return;
  std::vector<double> values(row);
  for (int64_t start = 0; start < t.num_elements(); start += row) {
    // Softmax of normals, computed in double with the largest logit subtracted.
    double largest = -std::numeric_limits<double>::infinity();
    for (double& v : values) {
      v = rng.normal();
      largest = std::max(largest, v);
    }
    double sum = 0;
    for (double& v : values) {
      v = portable_exp(v - largest);
      sum += v;
    }
    for (int64_t j = 0; j < row; ++j) t.set(start + j, values[j] / sum);
  }
}

void fill_int_range(tensor::HostTensor& t, Rng& rng, const ir::ValueDomain& domain, const ir::Param& param,
                    const ir::PrimFunc& func) {
  if (domain.hi <= domain.lo) {
    throw UserError(fmt::format("{}: empty integer range [{}, {})", describe(param, func), domain.lo, domain.hi));
  }
  if (t.dtype().is_int() &&
      (domain.lo < ir::int_min_value(t.dtype()) || domain.hi - 1 > ir::int_max_value(t.dtype()))) {
    throw UserError(
        fmt::format("{}: integer range [{}, {}) does not fit the type", describe(param, func), domain.lo, domain.hi));
  }
  uint64_t span = static_cast<uint64_t>(domain.hi) - static_cast<uint64_t>(domain.lo);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    int64_t value = static_cast<int64_t>(static_cast<uint64_t>(domain.lo) + rng.below(span));
    if (t.dtype().is_float()) {
      t.set(i, static_cast<double>(value));
    } else {
      t.set_int(i, value);
    }
  }
}

// B+1 offsets of B bags: lengths drawn uniformly in [0, max_len], then moved toward the
// total in random portions, and a last deterministic pass that must land on it exactly.
void fill_offsets(tensor::HostTensor& t, Rng& rng, const ir::ValueDomain& domain, const ir::Param& param,
                  const ir::PrimFunc& func) {
  if (t.shape().size() != 1 || t.shape()[0] < 1) {
    throw UserError(
        fmt::format("{}: an offsets domain needs a 1-d buffer of at least one element", describe(param, func)));
  }
  int64_t bags = t.shape()[0] - 1;
  if (domain.max_len < 0 || domain.total < 0 || domain.total > bags * domain.max_len) {
    throw UserError(fmt::format("{}: {} bags of at most {} elements cannot hold a total of {}", describe(param, func),
                                bags, domain.max_len, domain.total));
  }
  if (t.dtype().is_int() && domain.total > ir::int_max_value(t.dtype())) {
    throw UserError(fmt::format("{}: a total of {} does not fit the type", describe(param, func), domain.total));
  }
  std::vector<int64_t> lengths(bags);
  int64_t sum = 0;
  for (int64_t& length : lengths) {
    length = static_cast<int64_t>(rng.below(static_cast<uint64_t>(domain.max_len) + 1));
    sum += length;
  }
  // Each pass moves every bag by a random part of what it may take, then one exact pass.
  for (int pass = 0; pass < 4 && sum != domain.total; ++pass) {
    for (int64_t& length : lengths) {
      int64_t need = domain.total - sum;
      int64_t room = need > 0 ? std::min(need, domain.max_len - length) : std::min(-need, length);
      if (room <= 0) continue;
      int64_t step = static_cast<int64_t>(rng.below(static_cast<uint64_t>(room) + 1));
      length += need > 0 ? step : -step;
      sum += need > 0 ? step : -step;
    }
  }
  for (int64_t& length : lengths) {
    int64_t need = domain.total - sum;
    if (need == 0) break;
    int64_t step = need > 0 ? std::min(need, domain.max_len - length) : -std::min(-need, length);
    length += step;
    sum += step;
  }
  DRAGON_CHECK(sum == domain.total, "offsets sum {} missed the total {}", sum, domain.total);
  int64_t offset = 0;
  t.set_int(0, 0);
  for (int64_t b = 0; b < bags; ++b) {
    offset += lengths[b];
    t.set_int(b + 1, offset);
  }
}

void fill_output(tensor::HostTensor& t) {
  if (t.dtype().is_float()) {
    t.fill(std::numeric_limits<double>::quiet_NaN());
  } else {
    std::memset(t.data(), kGarbageByte, static_cast<size_t>(t.size_bytes()));
  }
}

}  // namespace

std::optional<Distribution> parse_distribution(std::string_view name) {
  for (const DistributionName& entry : kDistributionNames) {
    if (entry.name == name) return entry.distribution;
  }
  return std::nullopt;
}

std::string_view distribution_name(Distribution distribution) {
  for (const DistributionName& entry : kDistributionNames) {
    if (entry.distribution == distribution) return entry.name;
  }
  DRAGON_UNREACHABLE("distribution {}", static_cast<int>(distribution));
}

std::string_view distribution_names() { return "normal, uniform, rand, offset, edge"; }

tensor::HostTensor make_argument(const ir::PrimFunc& func, size_t index, uint64_t seed, Distribution distribution) {
  DRAGON_CHECK(func.defined() && index < func->params.size(), "make_argument of parameter {} of {}", index,
               func.defined() ? func->params.size() : 0);
  const ir::Param& param = func->params[index];
  tensor::HostTensor t = tensor::HostTensor::like(param.buffer);
  if (param.role == ir::ParamRole::kOutput) {
    fill_output(t);
    return t;
  }
  Rng rng(seed, index);
  switch (param.domain.kind) {
    case ir::ValueDomain::Kind::kReal: fill_real(t, rng, distribution, param); break;
    case ir::ValueDomain::Kind::kPositive: fill_positive(t, rng, distribution); break;
    case ir::ValueDomain::Kind::kSimplex: fill_simplex(t, rng, param, func); break;
    case ir::ValueDomain::Kind::kIntRange: fill_int_range(t, rng, param.domain, param, func); break;
    case ir::ValueDomain::Kind::kOffsets: fill_offsets(t, rng, param.domain, param, func); break;
  }
  return t;
}

std::vector<tensor::HostTensor> make_arguments(const ir::PrimFunc& func, uint64_t seed, Distribution distribution) {
  DRAGON_CHECK(func.defined(), "make_arguments of an undefined function");
  std::vector<tensor::HostTensor> args;
  args.reserve(func->params.size());
  for (size_t index = 0; index < func->params.size(); ++index) {
    args.push_back(make_argument(func, index, seed, distribution));
  }
  return args;
}

}  // namespace dragon::interp
