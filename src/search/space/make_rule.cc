// make_rule (rule.h): the rule kinds of rule_kinds.def by name, each built by its factory
// from its parameters, which the factory reads (with their defaults) and finish() checks.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/support/error.h"
#include "space/rule.h"

namespace dragon::search {

const std::vector<std::string>& rule_kind_names() {
  static const std::vector<std::string> names = {
#define DRAGON_SEARCH_RULE(name) #name,
#include "space/rule_kinds.def"
  };
  return names;
}

std::unique_ptr<ScheduleRule> make_rule(const RuleSpec& spec, const lower::Target& target) {
  ParamReader params(spec.params, "rule " + spec.rule);
  std::unique_ptr<ScheduleRule> rule;
#define DRAGON_SEARCH_RULE(name) \
  if (spec.rule == #name) rule = make_##name##_rule(params, target);
#include "space/rule_kinds.def"
  if (!rule) {
    throw UserError(fmt::format("unknown rule '{}' (valid: {})", spec.rule, fmt::join(rule_kind_names(), ", ")));
  }
  params.finish();
  return rule;
}

}  // namespace dragon::search
