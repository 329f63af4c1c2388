// Op spec parsing, validation and the global registry.
#include "dragon/ops/op_registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "dragon/ops/families.h"
#include "dragon/support/error.h"

namespace dragon::ops {
namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<std::string> param_names(const OpKind& op) {
  std::vector<std::string> names;
  for (const OpParam& p : op.params) names.push_back(p.name);
  return names;
}

// Edit distance for "did you mean" hints.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string suggestion(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 3;  // only close matches
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  if (text.empty()) return std::nullopt;
  const char* begin = text.data();
  if (*begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_float(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

struct SpecError {
  int column;
  std::string message;
};

// Converts the text of one value; nullopt plus `why` on failure.
std::optional<ParamValue> parse_value(const OpParam& param, std::string_view text, std::string& why) {
  switch (param.type) {
    case ParamType::kInt: {
      auto v = parse_int(text);
      if (!v) {
        why = "'" + std::string(text) + "' is not an integer";
        return std::nullopt;
      }
      if (param.min_value && *v < *param.min_value) {
        why = fmt::format("{} is below the minimum {}", *v, *param.min_value);
        return std::nullopt;
      }
      return ParamValue(*v);
    }
    case ParamType::kFloat: {
      auto v = parse_float(text);
      if (!v) {
        why = "'" + std::string(text) + "' is not a finite number";
        return std::nullopt;
      }
      return ParamValue(*v);
    }
    case ParamType::kBool:
      if (text == "true" || text == "1") return ParamValue(true);
      if (text == "false" || text == "0") return ParamValue(false);
      why = "'" + std::string(text) + "' is not a boolean (true, false, 1, 0)";
      return std::nullopt;
    case ParamType::kDType: {
      auto t = ir::parse_dtype(text);
      bool allowed = t && t->is_scalar() &&
                     (param.choices.empty() ||
                      std::find(param.choices.begin(), param.choices.end(), std::string(text)) != param.choices.end());
      if (!allowed) {
        why = "'" + std::string(text) + "' is not one of " +
              (param.choices.empty() ? std::string(ir::scalar_dtype_names()) : join_names(param.choices));
        return std::nullopt;
      }
      return ParamValue(*t);
    }
    case ParamType::kChoice:
      if (std::find(param.choices.begin(), param.choices.end(), std::string(text)) == param.choices.end()) {
        why = "'" + std::string(text) + "' is not one of " + join_names(param.choices);
        return std::nullopt;
      }
      return ParamValue(std::string(text));
    case ParamType::kShape: {
      std::vector<int64_t> dims;
      size_t start = 0;
      while (true) {
        size_t x = text.find('x', start);
        std::string_view part = text.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start);
        auto v = parse_int(part);
        int64_t minimum = param.min_value.value_or(1);
        if (!v || *v < minimum) {
          why = "'" + std::string(text) + "' is not a shape of integers >= " + std::to_string(minimum) +
                " joined by 'x' (like 16x64x256)";
          return std::nullopt;
        }
        dims.push_back(*v);
        if (x == std::string_view::npos) break;
        start = x + 1;
      }
      return ParamValue(std::move(dims));
    }
  }
  DRAGON_UNREACHABLE("param type");
}

}  // namespace

std::string_view param_type_name(ParamType type) {
  switch (type) {
    case ParamType::kInt: return "int";
    case ParamType::kFloat: return "float";
    case ParamType::kBool: return "bool";
    case ParamType::kDType: return "dtype";
    case ParamType::kChoice: return "choice";
    case ParamType::kShape: return "shape";
  }
  DRAGON_UNREACHABLE("param type");
}

std::string format_param_value(const ParamValue& value) {
  struct Formatter {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      char buffer[64];
      auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
      return std::string(buffer, ptr);
    }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(ir::DataType v) const { return ir::to_string(v); }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const std::vector<int64_t>& v) const {
      std::string out;
      for (int64_t d : v) out += (out.empty() ? "" : "x") + std::to_string(d);
      return out;
    }
  };
  return std::visit(Formatter{}, value);
}

const OpParam* OpKind::find_param(std::string_view param) const {
  for (const OpParam& p : params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

const ParamValue& OpArgs::get(std::string_view name) const {
  auto it = values_.find(name);
  DRAGON_CHECK(it != values_.end(), "op {} has no argument {}", op_->name, name);
  return it->second;
}

int64_t OpArgs::get_int(std::string_view name) const { return std::get<int64_t>(get(name)); }
double OpArgs::get_float(std::string_view name) const { return std::get<double>(get(name)); }
bool OpArgs::get_bool(std::string_view name) const { return std::get<bool>(get(name)); }
ir::DataType OpArgs::get_dtype(std::string_view name) const { return std::get<ir::DataType>(get(name)); }
const std::string& OpArgs::get_choice(std::string_view name) const { return std::get<std::string>(get(name)); }
const std::vector<int64_t>& OpArgs::get_shape(std::string_view name) const {
  return std::get<std::vector<int64_t>>(get(name));
}

void OpArgs::require(bool condition, std::string_view param, std::string_view message) const {
  if (!condition) throw UserError(fmt::format("op {}: parameter {}: {}", op_->name, param, message));
}

void OpRegistry::add(OpKind op) {
  DRAGON_CHECK(find(op.name) == nullptr, "op {} registered twice", op.name);
  DRAGON_CHECK(op.build != nullptr, "op {} without a builder", op.name);
  kinds_.push_back(std::move(op));
}

const OpKind* OpRegistry::find(std::string_view name) const {
  for (const OpKind& op : kinds_) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

OpArgs OpRegistry::parse(std::string_view spec) const {
  auto fail = [&](size_t offset, const std::string& message) -> UserError {
    return UserError::at("<spec>", 1, static_cast<int>(offset) + 1, message);
  };
  size_t colon = spec.find(':');
  std::string_view name = spec.substr(0, colon);
  const OpKind* op = find(name);
  if (op == nullptr) {
    std::vector<std::string> names;
    for (const OpKind& k : kinds_) names.push_back(k.name);
    throw fail(0, fmt::format("unknown op '{}'{}; valid ops: {}", name, suggestion(name, names), join_names(names)));
  }
  std::map<std::string, ParamValue, std::less<>> values;
  if (colon != std::string_view::npos) {
    size_t pos = colon + 1;
    if (pos == spec.size()) throw fail(pos, fmt::format("op {}: nothing after ':'", op->name));
    while (pos <= spec.size()) {
      size_t comma = spec.find(',', pos);
      size_t end = comma == std::string_view::npos ? spec.size() : comma;
      std::string_view item = spec.substr(pos, end - pos);
      size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        throw fail(pos, fmt::format("op {}: expected key=value, got '{}'", op->name, item));
      }
      std::string_view key = item.substr(0, eq);
      std::string_view text = item.substr(eq + 1);
      const OpParam* param = op->find_param(key);
      if (param == nullptr) {
        throw fail(pos, fmt::format("op {} has no parameter '{}'{}; valid: {}", op->name, key,
                                    suggestion(key, param_names(*op)), join_names(param_names(*op))));
      }
      if (values.count(key)) throw fail(pos, fmt::format("op {}: parameter {} given twice", op->name, key));
      std::string why;
      auto value = parse_value(*param, text, why);
      if (!value) {
        throw fail(pos + eq + 1, fmt::format("op {}: parameter {} ({}): {}", op->name, key,
                                             param_type_name(param->type), why));
      }
      values.emplace(std::string(key), std::move(*value));
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
  }
  for (const OpParam& p : op->params) {
    if (values.count(p.name)) continue;
    if (!p.default_value) {
      throw fail(spec.size(), fmt::format("op {}: parameter {} is required ({}: {})", op->name, p.name,
                                          param_type_name(p.type), p.help));
    }
    values.emplace(p.name, *p.default_value);
  }
  return OpArgs(op, std::move(values));
}

Workload OpRegistry::make_workload(std::string_view spec) const {
  OpArgs args = parse(spec);
  const OpKind* op = find(spec.substr(0, spec.find(':')));
  return Workload{canonical_spec(*op, args), op, op->build(args)};
}

std::map<std::string, std::string> canonical_values(const OpArgs& args) {
  std::map<std::string, std::string> values;
  for (const auto& [name, value] : args.values()) values[name] = format_param_value(value);
  return values;
}

std::string canonical_spec(const OpKind& op, const OpArgs& args) {
  std::string out = op.name;
  char separator = ':';
  for (const OpParam& p : op.params) {
    out += separator + p.name + "=" + format_param_value(args.values().at(p.name));
    separator = ',';
  }
  return out;
}

OpParam int_param(std::string name, std::optional<int64_t> default_value, std::string help, int64_t min_value) {
  OpParam p{std::move(name), ParamType::kInt, std::nullopt, std::move(help), {}, min_value};
  if (default_value) p.default_value = ParamValue(*default_value);
  return p;
}

OpParam float_param(std::string name, std::optional<double> default_value, std::string help) {
  OpParam p{std::move(name), ParamType::kFloat, std::nullopt, std::move(help), {}, std::nullopt};
  if (default_value) p.default_value = ParamValue(*default_value);
  return p;
}

OpParam bool_param(std::string name, bool default_value, std::string help) {
  return OpParam{std::move(name), ParamType::kBool, ParamValue(default_value), std::move(help), {}, std::nullopt};
}

OpParam dtype_param(std::string name, std::string default_value, std::string help, std::vector<std::string> allowed) {
  auto type = ir::parse_dtype(default_value);
  DRAGON_CHECK(type.has_value(), "default dtype {} of {}", default_value, name);
  return OpParam{std::move(name), ParamType::kDType, ParamValue(*type), std::move(help), std::move(allowed),
                 std::nullopt};
}

OpParam choice_param(std::string name, std::string default_value, std::vector<std::string> choices,
                     std::string help) {
  DRAGON_CHECK(std::find(choices.begin(), choices.end(), default_value) != choices.end(), "default {} of {}",
               default_value, name);
  return OpParam{std::move(name), ParamType::kChoice, ParamValue(std::move(default_value)), std::move(help),
                 std::move(choices), std::nullopt};
}

OpParam shape_param(std::string name, std::optional<std::vector<int64_t>> default_value, std::string help) {
  OpParam p{std::move(name), ParamType::kShape, std::nullopt, std::move(help), {}, std::nullopt};
  if (default_value) p.default_value = ParamValue(std::move(*default_value));
  return p;
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_matmul_ops(r);
    register_conv_ops(r);
    register_pool_ops(r);
    register_activation_ops(r);
    register_norm_ops(r);
    register_reduce_ops(r);
    register_scan_ops(r);
    register_loss_ops(r);
    register_attention_ops(r);
    register_recsys_ops(r);
    register_fused_ops(r);
    return r;
  }();
  return registry;
}

}  // namespace dragon::ops
