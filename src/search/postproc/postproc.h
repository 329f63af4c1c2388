// Postproc: one postprocessor of candidates (MetaSchedule's Postproc), applied after a
// sketch is replayed. The kinds are listed once in postproc_kinds.def, each in its own
// file (postproc/<kind>.cc). Not the driver (apply_postprocs.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dragon/lower/target.h"
#include "dragon/schedule/schedule.h"
#include "dragon/search/rule_set.h"
#include "param_reader.h"

namespace dragon::search {

class Postproc {
 public:
  virtual ~Postproc() = default;
  // Rewrites `sch` through its primitives (recorded in its trace). Returns nullopt when
  // the candidate may go on, or why it is rejected (a verifier). A primitive that refuses
  // throws ScheduleError; the driver makes it the candidate's failure.
  virtual std::optional<std::string> apply(schedule::Schedule& sch) const = 0;
};

// The postprocessor of `spec.postproc` (UserError for an unknown kind or parameter).
std::unique_ptr<Postproc> make_postproc(const PostprocSpec& spec, const lower::Target& target);

// The known kinds, in postproc_kinds.def order.
const std::vector<std::string>& postproc_kind_names();

#define DRAGON_SEARCH_POSTPROC(name) \
  std::unique_ptr<Postproc> make_##name##_postproc(ParamReader& params, const lower::Target& target);
#include "postproc/postproc_kinds.def"

}  // namespace dragon::search
