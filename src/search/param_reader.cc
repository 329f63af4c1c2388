// ParamReader (param_reader.h).
#include "param_reader.h"

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::search {

const RuleParam* ParamReader::find(const std::string& name) {
  known_.insert(name);
  auto it = params_.find(name);
  return it == params_.end() ? nullptr : &it->second;
}

void ParamReader::wrong_type(const std::string& name, const char* expected) const {
  throw UserError(fmt::format("{}: parameter '{}' must be {}", owner_, name, expected));
}

bool ParamReader::get_bool(const std::string& name, bool fallback) {
  const RuleParam* p = find(name);
  if (p == nullptr) return fallback;
  if (const auto* v = std::get_if<bool>(p)) return *v;
  wrong_type(name, "true or false");
}

int64_t ParamReader::get_int(const std::string& name, int64_t fallback) {
  const RuleParam* p = find(name);
  if (p == nullptr) return fallback;
  if (const auto* v = std::get_if<int64_t>(p)) return *v;
  wrong_type(name, "an integer");
}

double ParamReader::get_float(const std::string& name, double fallback) {
  const RuleParam* p = find(name);
  if (p == nullptr) return fallback;
  if (const auto* v = std::get_if<double>(p)) return *v;
  if (const auto* v = std::get_if<int64_t>(p)) return static_cast<double>(*v);
  wrong_type(name, "a number");
}

std::string ParamReader::get_string(const std::string& name, const std::string& fallback) {
  const RuleParam* p = find(name);
  if (p == nullptr) return fallback;
  if (const auto* v = std::get_if<std::string>(p)) return *v;
  wrong_type(name, "a string");
}

std::vector<int64_t> ParamReader::get_ints(const std::string& name, const std::vector<int64_t>& fallback) {
  const RuleParam* p = find(name);
  if (p == nullptr) return fallback;
  if (const auto* v = std::get_if<std::vector<int64_t>>(p)) return *v;
  if (const auto* v = std::get_if<std::vector<std::string>>(p); v != nullptr && v->empty()) return {};
  wrong_type(name, "a list of integers");
}

std::vector<std::string> ParamReader::get_strings(const std::string& name, const std::vector<std::string>& fallback) {
  const RuleParam* p = find(name);
  if (p == nullptr) return fallback;
  if (const auto* v = std::get_if<std::vector<std::string>>(p)) return *v;
  if (const auto* v = std::get_if<std::vector<int64_t>>(p); v != nullptr && v->empty()) return {};
  wrong_type(name, "a list of strings");
}

void ParamReader::finish() const {
  for (const auto& [name, value] : params_) {
    if (known_.count(name) != 0) continue;
    std::string valid;
    for (const std::string& k : known_) valid += (valid.empty() ? "" : ", ") + k;
    throw UserError(fmt::format("{}: unknown parameter '{}' (valid: {})", owner_, name,
                                valid.empty() ? "none" : valid));
  }
}

}  // namespace dragon::search
