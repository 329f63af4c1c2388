#include "tuned_vs_default.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/search/cpu_measurer.h"

namespace dragon::search::testing {

std::optional<ir::PrimFunc> best_tuned(const db::Database &database,
                                       const ops::Workload &workload) {
  std::vector<db::TuningKey> keys = database.keys();
  EXPECT_EQ(keys.size(), 1u);
  if (keys.size() != 1)
    return std::nullopt;
  std::optional<db::StoredRecord> best = database.best(keys[0]);
  EXPECT_TRUE(best.has_value());
  if (!best)
    return std::nullopt;
  EXPECT_FALSE(best->record.script.empty())
      << "the default schedule is the best record";
  if (best->record.script.empty())
    return std::nullopt;
  return schedule::replay(script::decode(best->record.script), workload.func)
      .func();
}

Gain remeasure_against_default(const ops::Workload &workload,
                               const ir::PrimFunc &tuned, int rounds) {
  std::vector<double> defaults, tuneds;
  for (int round = 0; round < rounds; ++round) {
    CpuMeasurerOptions options;
    options.timer.max_seconds = 0.5;
    options.timer.min_calls = 10;
    std::unique_ptr<Measurer> m = make_cpu_measurer(workload.func, options);
    const bool default_first = round % 2 == 0;
    std::vector<ir::PrimFunc> order =
        default_first ? std::vector<ir::PrimFunc>{workload.func, tuned}
                      : std::vector<ir::PrimFunc>{tuned, workload.func};
    std::vector<MeasureResult> r = m->measure(order);
    for (const MeasureResult &x : r)
      EXPECT_TRUE(x.ok()) << x.error;
    if (!r[0].ok() || !r[1].ok())
      return {};
    defaults.push_back(*r[default_first ? 0 : 1].median_ms());
    tuneds.push_back(*r[default_first ? 1 : 0].median_ms());
  }
  std::sort(defaults.begin(), defaults.end());
  std::sort(tuneds.begin(), tuneds.end());
  Gain gain{defaults[defaults.size() / 2], tuneds[tuneds.size() / 2]};
  std::printf("%s: default %.4g ms, tuned %.4g ms (%.2fx), measured again\n",
              workload.spec.c_str(), gain.default_ms, gain.tuned_ms,
              gain.default_ms / gain.tuned_ms);
  return gain;
}

} // namespace dragon::search::testing
