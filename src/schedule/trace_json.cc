// The JSON codec of traces in TVM's layout. Writing renames random variables
// canonically; reading checks every shape and reports the instruction index on error.
#include "dragon/schedule/trace_json.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/support/error.h"

namespace dragon::schedule {

using nlohmann::json;

namespace {

json arg_to_json(const Arg& arg, bool is_input) {
  struct Writer {
    bool is_input;
    json operator()(None) const { return is_input ? json("None") : json(nullptr); }
    json operator()(bool v) const { return json(v); }
    json operator()(int64_t v) const { return json(v); }
    json operator()(double v) const { return json(v); }
    // Inputs wrap strings in quotes to tell them from random variable names.
    json operator()(const std::string& v) const { return is_input ? json("\"" + v + "\"") : json(v); }
    json operator()(const RandomVar& v) const { return json(rv_name(v)); }
    json operator()(const Arg::List& v) const {
      json out = json::array();
      for (const Arg& a : v) out.push_back(arg_to_json(a, is_input));
      return out;
    }
  };
  return std::visit(Writer{is_input}, arg.value());
}

class Reader {
 public:
  Trace read(const json& root) {
    if (!root.is_array() || root.size() != 2 || !root[0].is_array() || !root[1].is_array()) {
      throw UserError("trace JSON: expected [instructions, decisions]");
    }
    Trace trace;
    std::vector<Instruction> insts;
    for (size_t i = 0; i < root[0].size(); ++i) insts.push_back(read_inst(root[0][i], i));
    std::map<size_t, Arg> decisions;
    for (const json& d : root[1]) {
      if (!d.is_array() || d.size() != 2 || !d[0].is_number_integer()) {
        throw UserError(fmt::format("trace JSON: decision {} is not [instruction_index, value]", d.dump()));
      }
      int64_t index = d[0].get<int64_t>();
      if (index < 0 || index >= static_cast<int64_t>(insts.size())) {
        throw UserError(fmt::format("trace JSON: decision for instruction {}, which does not exist", index));
      }
      index_ = static_cast<size_t>(index);
      decisions[index_] = read_value(d[1], /*is_input=*/false);
    }
    for (size_t i = 0; i < insts.size(); ++i) {
      auto it = decisions.find(i);
      trace.append(std::move(insts[i]), it == decisions.end() ? std::nullopt : std::optional<Arg>(it->second));
    }
    return trace;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw UserError(fmt::format("trace JSON: instruction {}: {}", index_, message));
  }

  RandomVar parse_name(const std::string& name) const {
    RVType type;
    if (name.size() < 2) fail(fmt::format("'{}' is not a random variable name", name));
    switch (name[0]) {
      case 'b': type = RVType::kBlock; break;
      case 'l': type = RVType::kLoop; break;
      case 'v': type = RVType::kExpr; break;
      default: fail(fmt::format("'{}' is not a random variable name", name));
    }
    int64_t id = 0;
    for (size_t i = 1; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9' || i > 18) fail(fmt::format("'{}' is not a random variable name", name));
      id = id * 10 + (name[i] - '0');
    }
    return RandomVar{type, id};
  }

  Arg read_value(const json& j, bool is_input) const {
    if (j.is_null()) return Arg(None{});
    if (j.is_boolean()) return Arg(j.get<bool>());
    if (j.is_number_integer()) {
      if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) fail("integer out of range");
      return Arg(j.get<int64_t>());
    }
    if (j.is_number_float()) return Arg(j.get<double>());
    if (j.is_array()) {
      Arg::List list;
      for (const json& x : j) list.push_back(read_value(x, is_input));
      return Arg(std::move(list));
    }
    if (!j.is_string()) fail(fmt::format("unexpected value {}", j.dump()));
    std::string s = j.get<std::string>();
    if (!is_input) return Arg(std::move(s));
    if (s == "None") return Arg(None{});
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return Arg(s.substr(1, s.size() - 2));
    RandomVar rv = parse_name(s);
    auto it = defined_.find(rv.id);
    if (it == defined_.end() || it->second != rv.type) fail(fmt::format("input {} is used before it is defined", s));
    return Arg(rv);
  }

  Instruction read_inst(const json& j, size_t index) {
    index_ = index;
    if (!j.is_array() || j.size() != 4 || !j[0].is_string() || !j[1].is_array() || !j[2].is_array() ||
        !j[3].is_array()) {
      fail("expected [kind, inputs, attrs, outputs]");
    }
    Instruction inst;
    std::string kind = j[0].get<std::string>();
    auto parsed = parse_instruction_kind(kind);
    if (!parsed) fail(fmt::format("unknown instruction kind '{}'", kind));
    inst.kind = *parsed;
    for (const json& x : j[1]) inst.inputs.push_back(read_value(x, /*is_input=*/true));
    for (const json& x : j[2]) inst.attrs.push_back(read_value(x, /*is_input=*/false));
    for (const json& x : j[3]) {
      if (!x.is_string()) fail(fmt::format("output {} is not a name", x.dump()));
      RandomVar rv = parse_name(x.get<std::string>());
      if (!defined_.emplace(rv.id, rv.type).second) fail(fmt::format("output {} is defined twice", rv_name(rv)));
      inst.outputs.push_back(rv);
    }
    return inst;
  }

  std::map<int64_t, RVType> defined_;
  size_t index_ = 0;
};

}  // namespace

std::string trace_to_json(const Trace& trace) {
  Trace t = trace.canonical();
  json insts = json::array();
  for (const Instruction& inst : t.instructions()) {
    json inputs = json::array(), attrs = json::array(), outputs = json::array();
    for (const Arg& a : inst.inputs) inputs.push_back(arg_to_json(a, true));
    for (const Arg& a : inst.attrs) attrs.push_back(arg_to_json(a, false));
    for (const RandomVar& rv : inst.outputs) outputs.push_back(rv_name(rv));
    insts.push_back(json::array({std::string(instruction_kind_name(inst.kind)), inputs, attrs, outputs}));
  }
  json decisions = json::array();
  for (const auto& [index, value] : t.decisions()) {
    decisions.push_back(json::array({index, arg_to_json(value, false)}));
  }
  return json::array({insts, decisions}).dump();
}

Trace trace_from_json(std::string_view text) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UserError(fmt::format("trace JSON: {}", e.what()));
  }
  return Reader().read(root);
}

}  // namespace dragon::schedule
