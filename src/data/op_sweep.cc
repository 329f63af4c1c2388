// Sampling op instances for the op sweep (op_sweep.h).
#include "op_sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "corpus_rows.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

// splitmix64: a small generator whose output is the same everywhere (std's distributions
// are not specified bit for bit, so they are not used).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int64_t uniform_int(int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // Log-uniform in [lo, hi] (lo >= 1); half of the draws rounded to a power of two inside.
  int64_t log_uniform(int64_t lo, int64_t hi) {
    const double x = std::exp(std::log(static_cast<double>(lo)) +
                              uniform() * (std::log(static_cast<double>(hi) + 1) - std::log(static_cast<double>(lo))));
    int64_t v = std::clamp(static_cast<int64_t>(x), lo, hi);
    if (next() & 1) {
      int64_t p = 1;
      while (p * 2 <= v) p *= 2;
      if (v - p > p * 2 - v && p * 2 <= hi) p *= 2;
      if (p >= lo) v = p;
    }
    return v;
  }

 private:
  uint64_t state_;
};

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

std::optional<double> parse_number(const std::string& text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string join_shape(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

}  // namespace

OpSweep OpSweep::read(const std::string& path, const std::string& label) {
  OpSweep sweep;
  bool have_samples = false, have_seed = false;
  for (const CorpusRow& row : read_corpus_rows(path, label)) {
    auto fail = [&](const std::string& why) { return UserError(fmt::format("{}: {}", row_where(label, row), why)); };
    if (row.kind == "setting") {
      const auto number = parse_number(row.value);
      if (!number || *number < 0 || *number != std::floor(*number)) {
        throw fail(fmt::format("setting {}: '{}' is not a non-negative integer", row.name, row.value));
      }
      if (row.name == "samples_per_kind") {
        sweep.samples_per_kind_ = static_cast<int64_t>(*number);
        have_samples = true;
      } else if (row.name == "seed") {
        sweep.seed_ = static_cast<uint64_t>(*number);
        have_seed = true;
      } else {
        throw fail(fmt::format("unknown setting '{}' (samples_per_kind, seed)", row.name));
      }
      continue;
    }
    Range range{row.kind, 0, 0, {}};
    const std::vector<std::string> items = split_list(row.value);
    if (row.kind == "float") {
      for (const std::string& item : items) {
        if (!parse_number(item)) throw fail(fmt::format("'{}' is not a number", item));
      }
      range.values = items;
    } else if (row.kind == "int" || row.kind == "log" || row.kind == "each" || row.kind == "total" ||
               row.kind == "rank") {
      if (items.size() != 2) throw fail(fmt::format("{} {}: expected LO,HI, got '{}'", row.kind, row.name, row.value));
      const auto lo = parse_number(items[0]), hi = parse_number(items[1]);
      if (!lo || !hi || *lo > *hi || *lo != std::floor(*lo) || *hi != std::floor(*hi)) {
        throw fail(fmt::format("{} {}: '{}' is not an integer range LO,HI with LO <= HI", row.kind, row.name, row.value));
      }
      const bool positive = row.kind != "int" && row.kind != "each";
      if (positive && *lo < 1) throw fail(fmt::format("{} {}: LO must be >= 1", row.kind, row.name));
      range.lo = *lo;
      range.hi = *hi;
    } else {
      throw fail(fmt::format("unknown row kind '{}' (setting, int, log, each, total, rank, float)", row.kind));
    }
    auto& list = sweep.ranges_[row.name];
    for (const Range& r : list) {
      if (r.kind == range.kind) throw fail(fmt::format("a second '{}' row for {}", row.kind, row.name));
    }
    list.push_back(std::move(range));
  }
  if (!have_samples || !have_seed) {
    throw UserError(fmt::format("{}: needs 'setting samples_per_kind N' and 'setting seed N' rows", label));
  }
  return sweep;
}

const OpSweep::Range* OpSweep::find(const std::string& kind_group, const std::string& op,
                                    const std::string& param) const {
  for (const std::string& key : {op + "." + param, param}) {
    const auto it = ranges_.find(key);
    if (it == ranges_.end()) continue;
    for (const Range& r : it->second) {
      if (kind_group.find(r.kind) != std::string::npos) return &r;
    }
  }
  return nullptr;
}

void OpSweep::expand(const ops::OpRegistry& registry, const Visit& visit) const {
  for (const ops::OpKind& op : registry.kinds()) {
    Rng rng(seed_ ^ fnv1a(op.name));
    for (int64_t sample = 0; sample < samples_per_kind_; ++sample) {
      std::string spec = op.name;
      char separator = ':';
      for (const ops::OpParam& p : op.params) {
        std::string value;
        switch (p.type) {
          case ops::ParamType::kInt: {
            const int64_t minimum = p.min_value.value_or(1);
            if (const Range* r = find("int log", op.name, p.name)) {
              const int64_t lo = std::max<int64_t>(static_cast<int64_t>(r->lo), minimum);
              const int64_t hi = std::max<int64_t>(static_cast<int64_t>(r->hi), lo);
              value = std::to_string(r->kind == "log" ? rng.log_uniform(std::max<int64_t>(lo, 1), std::max<int64_t>(hi, 1))
                                                      : rng.uniform_int(lo, hi));
            } else {
              // Sizes around the declared default: 1/16 to 16 times it.
              const int64_t def = p.default_value ? std::get<int64_t>(*p.default_value) : 64;
              const int64_t lo = std::max<int64_t>({minimum, 1, def / 16});
              value = std::to_string(rng.log_uniform(lo, std::max<int64_t>(lo, std::max<int64_t>(def, 4) * 16)));
            }
            break;
          }
          case ops::ParamType::kFloat:
            if (const Range* r = find("float", op.name, p.name)) {
              value = r->values[rng.next() % r->values.size()];
            } else if (p.default_value) {
              value = ops::format_param_value(*p.default_value);
            } else {
              value = "1";
            }
            break;
          case ops::ParamType::kBool: value = (rng.next() & 1) ? "true" : "false"; break;
          case ops::ParamType::kDType:
          case ops::ParamType::kChoice:
            if (!p.choices.empty()) {
              value = p.choices[rng.next() % p.choices.size()];
            } else {
              value = ops::format_param_value(*p.default_value);
            }
            break;
          case ops::ParamType::kShape: {
            const std::vector<int64_t> def =
                p.default_value ? std::get<std::vector<int64_t>>(*p.default_value) : std::vector<int64_t>{64};
            int64_t rank = static_cast<int64_t>(def.size());
            if (const Range* r = find("rank", op.name, p.name)) {
              rank = rng.uniform_int(static_cast<int64_t>(r->lo), static_cast<int64_t>(r->hi));
            }
            std::vector<int64_t> dims(static_cast<size_t>(rank));
            const int64_t minimum = p.min_value.value_or(1);
            if (const Range* r = find("each log", op.name, p.name)) {
              const int64_t lo = std::max<int64_t>(static_cast<int64_t>(r->lo), minimum);
              const int64_t hi = std::max<int64_t>(static_cast<int64_t>(r->hi), lo);
              if (r->kind == "log") {
                for (int64_t& d : dims) d = rng.log_uniform(std::max<int64_t>(lo, 1), std::max<int64_t>(hi, 1));
              } else {
                const int64_t shared = rng.uniform_int(lo, hi);
                const bool square = rng.uniform() < 0.7;  // most kernels, strides and paddings are square
                for (int64_t& d : dims) d = square ? shared : rng.uniform_int(lo, hi);
              }
            } else {
              const Range* total = find("total", op.name, p.name);
              const double lo = total ? total->lo : 16, hi = total ? total->hi : 1 << 22;
              // Split log2(total) among the entries at random cut points.
              const double log_total = std::log2(lo) + rng.uniform() * (std::log2(hi) - std::log2(lo));
              std::vector<double> cuts(dims.size());
              double sum = 0;
              for (double& c : cuts) sum += (c = 0.25 + rng.uniform());
              for (size_t i = 0; i < dims.size(); ++i) {
                const int64_t d = static_cast<int64_t>(std::llround(std::exp2(log_total * cuts[i] / sum)));
                dims[i] = std::max<int64_t>({d, minimum, 1});
                if (rng.next() & 1) {  // half of the entries a power of two
                  int64_t p2 = 1;
                  while (p2 * 2 <= dims[i]) p2 *= 2;
                  dims[i] = std::max<int64_t>(p2, minimum);
                }
              }
            }
            value = join_shape(dims);
            break;
          }
        }
        spec += separator + p.name + "=" + value;
        separator = ',';
      }
      visit(spec, fmt::format("op-sweep {} #{}", op.name, sample));
    }
  }
}

}  // namespace dragon::data
