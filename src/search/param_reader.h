// ParamReader: a rule's or postprocessor's parameters read with their defaults, each get
// checking the type; finish() refuses the names no get asked for (an unknown parameter in
// a rule-set file). The defaults live in the code that reads them, written once.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "dragon/search/rule_set.h"

namespace dragon::search {

class ParamReader {
 public:
  // `owner` names the rule or postprocessor in messages ("rule multi_level_tiling").
  ParamReader(const RuleParams& params, std::string owner) : params_(params), owner_(std::move(owner)) {}

  bool get_bool(const std::string& name, bool fallback);
  int64_t get_int(const std::string& name, int64_t fallback);
  double get_float(const std::string& name, double fallback);
  std::string get_string(const std::string& name, const std::string& fallback);
  std::vector<int64_t> get_ints(const std::string& name, const std::vector<int64_t>& fallback);
  std::vector<std::string> get_strings(const std::string& name, const std::vector<std::string>& fallback);

  // Throws UserError naming a parameter no get read, and the ones that exist.
  void finish() const;

 private:
  const RuleParam* find(const std::string& name);
  [[noreturn]] void wrong_type(const std::string& name, const char* expected) const;

  const RuleParams& params_;
  std::string owner_;
  std::set<std::string> known_;
};

}  // namespace dragon::search
