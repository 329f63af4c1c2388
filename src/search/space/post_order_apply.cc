// generate_design_space (design_space.h): MetaSchedule's PostOrderApply. For each rule in
// order, for each schedule made so far, the blocks that exist when the rule starts are
// visited from the last to the first in program order (consumers first, the root last);
// a rule's result replaces the schedule (several results fork it).
#include <algorithm>
#include <memory>

#include "dragon/schedule/schedule_error.h"
#include "dragon/search/design_space.h"
#include "space/block_analysis.h"
#include "space/rule.h"

namespace dragon::search {
namespace {

using schedule::Schedule;

struct Partial {
  Schedule sch;
  std::vector<std::string> applied;
};

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool selector_matches(const BlockSelector& when, const ir::PrimFunc& func, const std::string& name,
                      const BlockSite* site) {
  if (when.empty()) return true;
  if (!when.ops.empty() && !contains(when.ops, func->name)) return false;
  if (!when.blocks.empty() && !contains(when.blocks, name)) return false;
  if (site == nullptr) return when.dtypes.empty() && when.patterns.empty();  // the root block
  if (!when.dtypes.empty()) {
    bool any = false;
    for (const auto* regions : {&site->block->reads, &site->block->writes}) {
      for (const ir::BufferRegion& r : *regions) any = any || contains(when.dtypes, ir::to_string(r.buffer->dtype));
    }
    if (!any) return false;
  }
  if (!when.patterns.empty() && !contains(when.patterns, block_pattern(func, name))) return false;
  return true;
}

// Whether the block opted out of every rule ("schedule_rule" = "None", as TVM spells it).
bool opted_out(const BlockSite* site) {
  if (site == nullptr) return false;
  auto it = site->block->annotations.find("schedule_rule");
  if (it == site->block->annotations.end()) return false;
  const auto* value = std::get_if<std::string>(&it->second);
  return value != nullptr && (*value == "None" || *value == "none");
}

}  // namespace

std::vector<Sketch> generate_design_space(const ir::PrimFunc& func, const lower::Target& target, const RuleSet& rules,
                                          int64_t seed) {
  const std::vector<RuleSpec>& specs = rules.rules_for(func->name);
  std::vector<std::unique_ptr<ScheduleRule>> made;
  for (const RuleSpec& spec : specs) made.push_back(make_rule(spec, target));

  std::vector<Partial> partials;
  partials.push_back({Schedule(func, seed), {}});
  for (size_t r = 0; r < made.size(); ++r) {
    std::vector<Partial> next;
    for (Partial& start : partials) {
      std::vector<std::string> names = block_names(start.sch.func());
      names.insert(names.begin(), "root");
      std::vector<Partial> current;
      current.push_back(std::move(start));
      for (auto name = names.rbegin(); name != names.rend(); ++name) {
        std::vector<Partial> after;
        for (Partial& p : current) {
          std::optional<BlockSite> site = *name == "root" ? std::nullopt : find_block(p.sch.func(), *name);
          bool exists = *name == "root" || site.has_value();
          const BlockSite* site_ptr = site ? &*site : nullptr;
          if (!exists || opted_out(site_ptr) || !selector_matches(specs[r].when, p.sch.func(), *name, site_ptr)) {
            after.push_back(std::move(p));
            continue;
          }
          std::vector<Schedule> results;
          try {
            results = made[r]->apply(p.sch, *name);
          } catch (const schedule::ScheduleError&) {
            results.clear();  // the rule could not finish on this block: the schedule stays
          }
          if (results.empty()) {
            after.push_back(std::move(p));
            continue;
          }
          for (Schedule& result : results) {
            Partial forked{std::move(result), p.applied};
            if (forked.sch.trace().size() != p.sch.trace().size()) {
              forked.applied.push_back(specs[r].rule + "(" + *name + ")");
            }
            after.push_back(std::move(forked));
          }
        }
        current = std::move(after);
      }
      for (Partial& p : current) next.push_back(std::move(p));
    }
    partials = std::move(next);
  }

  std::vector<Sketch> sketches;
  for (const Partial& p : partials) {
    schedule::Trace trace = p.sch.trace().simplified();
    bool duplicate = std::any_of(sketches.begin(), sketches.end(), [&](const Sketch& s) { return s.trace == trace; });
    if (!duplicate) sketches.push_back({std::move(trace), p.applied});
  }
  return sketches;
}

}  // namespace dragon::search
