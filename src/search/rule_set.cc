// RuleSet (rule_set.h): reading and writing rule-set files (JSON), extending a base set,
// and the built-in sets compiled from data/search/rules/ (rule_set_data.cc, generated).
// Every rule and postprocessor of a file is built once while reading, so an unknown kind
// or parameter is reported with the file, never when search runs.
#include "dragon/search/rule_set.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "postproc/postproc.h"
#include "space/rule.h"

namespace dragon::search {

// The text of data/search/rules/<name>.json, compiled in (rule_set_data.cc); nullptr for
// another name.
const char* builtin_rule_set_text(std::string_view name);

namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(std::string_view source, const std::string& path, const std::string& message) {
  throw UserError(fmt::format("{}: {}: {}", source, path, message));
}

RuleParam parse_param(const Json& value, std::string_view source, const std::string& path) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) return value.get<double>();
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    if (value.empty()) return std::vector<int64_t>{};
    if (std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_number_integer(); })) {
      return value.get<std::vector<int64_t>>();
    }
    if (std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_string(); })) {
      return value.get<std::vector<std::string>>();
    }
    fail(source, path, "a list must hold only integers or only strings");
  }
  fail(source, path, "a parameter is a boolean, a number, a string or a list of integers or strings");
}

Json param_to_json(const RuleParam& param) {
  return std::visit([](const auto& v) { return Json(v); }, param);
}

std::vector<std::string> string_list(const Json& value, std::string_view source, const std::string& path) {
  if (!value.is_array() || !std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_string(); })) {
    fail(source, path, "expected a list of strings");
  }
  return value.get<std::vector<std::string>>();
}

BlockSelector parse_selector(const Json& when, std::string_view source, const std::string& path) {
  if (!when.is_object()) fail(source, path, "\"when\" must be an object");
  BlockSelector s;
  for (const auto& [key, value] : when.items()) {
    std::string p = path + "." + key;
    if (key == "ops") s.ops = string_list(value, source, p);
    else if (key == "blocks") s.blocks = string_list(value, source, p);
    else if (key == "dtypes") s.dtypes = string_list(value, source, p);
    else if (key == "patterns") {
      s.patterns = string_list(value, source, p);
      for (const std::string& pattern : s.patterns) {
        if (pattern != "elementwise" && pattern != "reduction" && pattern != "matmul_like" && pattern != "opaque") {
          fail(source, p, "unknown pattern '" + pattern + "' (valid: elementwise, reduction, matmul_like, opaque)");
        }
      }
    } else {
      fail(source, p, "unknown selector key (valid: ops, blocks, dtypes, patterns)");
    }
  }
  return s;
}

RuleParams parse_params(const Json& object, std::string_view source, const std::string& path,
                        std::initializer_list<std::string_view> reserved) {
  RuleParams params;
  for (const auto& [key, value] : object.items()) {
    if (std::find(reserved.begin(), reserved.end(), key) != reserved.end()) continue;
    params[key] = parse_param(value, source, path + "." + key);
  }
  return params;
}

lower::Target validation_target(lower::Target::Kind kind) {
  return kind == lower::Target::Kind::kCuda ? lower::Target::cuda_h200() : lower::Target::cpu();
}

RuleSpec parse_rule(const Json& entry, std::string_view source, const std::string& path, lower::Target::Kind target) {
  if (!entry.is_object() || !entry.contains("rule") || !entry["rule"].is_string()) {
    fail(source, path, "a rule is an object with a \"rule\" name");
  }
  RuleSpec spec;
  spec.rule = entry["rule"].get<std::string>();
  spec.params = parse_params(entry, source, path, {"rule", "when"});
  if (entry.contains("when")) spec.when = parse_selector(entry["when"], source, path + ".when");
  try {
    make_rule(spec, validation_target(target));
  } catch (const UserError& e) {
    fail(source, path, e.what());
  }
  return spec;
}

std::vector<RuleSpec> parse_rules(const Json& list, std::string_view source, const std::string& path,
                                  lower::Target::Kind target) {
  if (!list.is_array()) fail(source, path, "expected a list of rules");
  std::vector<RuleSpec> rules;
  for (size_t i = 0; i < list.size(); ++i) rules.push_back(parse_rule(list[i], source, fmt::format("{}[{}]", path, i), target));
  return rules;
}

PostprocSpec parse_postproc(const Json& entry, std::string_view source, const std::string& path,
                            lower::Target::Kind target) {
  if (!entry.is_object() || !entry.contains("postproc") || !entry["postproc"].is_string()) {
    fail(source, path, "a postprocessor is an object with a \"postproc\" name");
  }
  PostprocSpec spec;
  spec.postproc = entry["postproc"].get<std::string>();
  spec.params = parse_params(entry, source, path, {"postproc"});
  try {
    make_postproc(spec, validation_target(target));
  } catch (const UserError& e) {
    fail(source, path, e.what());
  }
  return spec;
}

lower::Target::Kind parse_target(const Json& value, std::string_view source) {
  if (value == "cuda") return lower::Target::Kind::kCuda;
  if (value == "cpu") return lower::Target::Kind::kCpu;
  fail(source, "target", "expected \"cuda\" or \"cpu\"");
}

// Applies one "set" entry: params merged into the rules of that kind, in the op's list
// (made from `rules` first when the op has none) or in every list.
void apply_override(RuleSet& set, const Json& entry, std::string_view source, const std::string& path) {
  if (!entry.is_object() || !entry.contains("rule") || !entry["rule"].is_string() || !entry.contains("params") ||
      !entry["params"].is_object()) {
    fail(source, path, "a \"set\" entry is {\"op\": optional name, \"rule\": name, \"params\": {...}}");
  }
  std::string rule = entry["rule"].get<std::string>();
  RuleParams params = parse_params(entry["params"], source, path + ".params", {});
  std::vector<std::vector<RuleSpec>*> lists;
  if (entry.contains("op")) {
    if (!entry["op"].is_string()) fail(source, path + ".op", "expected an op kind name");
    std::string op = entry["op"].get<std::string>();
    auto it = set.op_rules.find(op);
    if (it == set.op_rules.end()) it = set.op_rules.emplace(op, set.rules).first;
    lists.push_back(&it->second);
  } else {
    lists.push_back(&set.rules);
    for (auto& [op, list] : set.op_rules) lists.push_back(&list);
  }
  int changed = 0;
  for (std::vector<RuleSpec>* list : lists) {
    for (RuleSpec& spec : *list) {
      if (spec.rule != rule) continue;
      for (const auto& [key, value] : params) spec.params[key] = value;
      try {
        make_rule(spec, validation_target(set.target));
      } catch (const UserError& e) {
        fail(source, path, e.what());
      }
      ++changed;
    }
  }
  if (changed == 0) fail(source, path, "no rule '" + rule + "' to set parameters of");
}

}  // namespace

RuleSet RuleSet::parse(std::string_view text, std::string_view source, const std::string& base_dir) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw UserError(fmt::format("{}: not JSON: {}", source, e.what()));
  }
  if (!doc.is_object()) fail(source, "(top)", "a rule set is a JSON object");
  for (const auto& [key, value] : doc.items()) {
    static const std::vector<std::string> known = {"name", "target", "extends", "rules", "postprocs", "ops", "set"};
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail(source, key, "unknown key (valid: name, target, extends, rules, postprocs, ops, set)");
    }
  }
  RuleSet set;
  if (doc.contains("extends")) {
    if (!doc["extends"].is_string()) fail(source, "extends", "expected a rule set name or path");
    std::string base = doc["extends"].get<std::string>();
    if (base == "cuda") set = cuda();
    else if (base == "cpu") set = cpu();
    else set = load((std::filesystem::path(base_dir) / base).string());
  }
  if (doc.contains("target")) set.target = parse_target(doc["target"], source);
  else if (!doc.contains("extends")) fail(source, "target", "a rule set without \"extends\" names its target");
  if (doc.contains("name")) {
    if (!doc["name"].is_string()) fail(source, "name", "expected a string");
    set.name = doc["name"].get<std::string>();
  } else if (set.name.empty()) {
    set.name = std::string(source);
  }
  if (doc.contains("rules")) set.rules = parse_rules(doc["rules"], source, "rules", set.target);
  if (doc.contains("postprocs")) {
    const Json& list = doc["postprocs"];
    if (!list.is_array()) fail(source, "postprocs", "expected a list of postprocessors");
    set.postprocs.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      set.postprocs.push_back(parse_postproc(list[i], source, fmt::format("postprocs[{}]", i), set.target));
    }
  }
  if (doc.contains("ops")) {
    const Json& ops = doc["ops"];
    if (!ops.is_object()) fail(source, "ops", "expected an object mapping op kinds to rule lists");
    for (const auto& [op, rules] : ops.items()) set.op_rules[op] = parse_rules(rules, source, "ops." + op, set.target);
  }
  if (doc.contains("set")) {
    const Json& overrides = doc["set"];
    if (!overrides.is_array()) fail(source, "set", "expected a list of parameter overrides");
    for (size_t i = 0; i < overrides.size(); ++i) apply_override(set, overrides[i], source, fmt::format("set[{}]", i));
  }
  return set;
}

RuleSet RuleSet::load(const std::string& path) {
  std::string text = read_text_file(path);
  return parse(text, path, std::filesystem::path(path).parent_path().string());
}

const RuleSet& RuleSet::cuda() {
  static const RuleSet set = parse(builtin_rule_set_text("cuda"), "data/search/rules/cuda.json");
  return set;
}

const RuleSet& RuleSet::cpu() {
  static const RuleSet set = parse(builtin_rule_set_text("cpu"), "data/search/rules/cpu.json");
  return set;
}

const RuleSet& RuleSet::for_target(const lower::Target& target) { return target.is_gpu() ? cuda() : cpu(); }

const std::vector<RuleSpec>& RuleSet::rules_for(std::string_view op) const {
  auto it = op_rules.find(op);
  return it == op_rules.end() ? rules : it->second;
}

std::string RuleSet::to_json() const {
  auto rule_json = [](const RuleSpec& spec) {
    Json entry = Json::object();
    entry["rule"] = spec.rule;
    if (!spec.when.empty()) {
      Json when = Json::object();
      if (!spec.when.ops.empty()) when["ops"] = spec.when.ops;
      if (!spec.when.blocks.empty()) when["blocks"] = spec.when.blocks;
      if (!spec.when.dtypes.empty()) when["dtypes"] = spec.when.dtypes;
      if (!spec.when.patterns.empty()) when["patterns"] = spec.when.patterns;
      entry["when"] = when;
    }
    for (const auto& [key, value] : spec.params) entry[key] = param_to_json(value);
    return entry;
  };
  Json doc = Json::object();
  doc["name"] = name;
  doc["target"] = target == lower::Target::Kind::kCuda ? "cuda" : "cpu";
  doc["rules"] = Json::array();
  for (const RuleSpec& spec : rules) doc["rules"].push_back(rule_json(spec));
  doc["postprocs"] = Json::array();
  for (const PostprocSpec& spec : postprocs) {
    Json entry = Json::object();
    entry["postproc"] = spec.postproc;
    for (const auto& [key, value] : spec.params) entry[key] = param_to_json(value);
    doc["postprocs"].push_back(entry);
  }
  if (!op_rules.empty()) {
    doc["ops"] = Json::object();
    for (const auto& [op, list] : op_rules) {
      Json rules_json = Json::array();
      for (const RuleSpec& spec : list) rules_json.push_back(rule_json(spec));
      doc["ops"][op] = rules_json;
    }
  }
  return doc.dump(2) + "\n";
}

}  // namespace dragon::search
