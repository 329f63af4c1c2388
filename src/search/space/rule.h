// ScheduleRule: one rule of the design space (MetaSchedule's ScheduleRule), applied to one
// block of a schedule by generate_design_space. The kinds are listed once in
// rule_kinds.def; each lives in its own file (space/<kind>.cc) with a factory that reads
// its parameters. Not the traversal (post_order_apply.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/rule_set.h"
#include "param_reader.h"

namespace dragon::search {

// A block annotation by which a rule keeps a copy it made in global memory on purpose (a
// convolution's weights reordered once for every tile that reads them): auto_inline leaves
// such a block where it is.
inline constexpr const char* kKeepMaterialized = "dragon.keep_materialized";

class ScheduleRule {
 public:
  virtual ~ScheduleRule() = default;
  // The schedules the rule makes of `block` (a name that resolves in `sch`): empty when
  // the rule does not apply (the caller keeps `sch` as it is); otherwise the schedules
  // that replace it, more than one for a fork (the untouched `sch` may be one of them).
  // A primitive failing inside a rule throws ScheduleError; the caller drops that fork.
  virtual std::vector<schedule::Schedule> apply(const schedule::Schedule& sch, const std::string& block) const = 0;
};

// The rule of `spec.rule` with `spec.params` (UserError for an unknown kind or parameter).
std::unique_ptr<ScheduleRule> make_rule(const RuleSpec& spec, const lower::Target& target);

// The known rule kinds, in rule_kinds.def order.
const std::vector<std::string>& rule_kind_names();

#define DRAGON_SEARCH_RULE(name) \
  std::unique_ptr<ScheduleRule> make_##name##_rule(ParamReader& params, const lower::Target& target);
#include "space/rule_kinds.def"

}  // namespace dragon::search
