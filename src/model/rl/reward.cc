// RL prompts and the measured reward (rl/reward.h). No libtorch here.
#include "dragon/model/rl/reward.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "dragon/support/text_lines.h"

namespace dragon::model {
namespace {

// The function `script` makes of `func`, or why not (a decode or replay error).
struct Replayed {
  std::optional<ir::PrimFunc> func;
  std::string why;
};
Replayed replay_script(const std::string& script_text, const ir::PrimFunc& func) {
  try {
    return {schedule::replay(script::decode(script_text), func).func(), ""};
  } catch (const schedule::ScheduleError& e) {
    return {std::nullopt, e.what()};
  } catch (const UserError& e) {
    return {std::nullopt, e.what()};
  }
}

}  // namespace

std::vector<RlPrompt> read_rl_prompts(const std::string& path) {
  const std::string text = read_text_file(path);
  std::vector<RlPrompt> prompts;
  for_each_nonblank_line(text, [&](std::string_view line, int line_number) {
    const std::string origin = fmt::format("{}:{}", path, line_number);
    auto fail = [&](std::string_view why) { return UserError(fmt::format("{}: {}", origin, why)); };
    // The SFT parser checks the fields; the target script it requires is not a prompt's,
    // so a placeholder stands in when the line has none.
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw fail(fmt::format("not JSON ({})", e.what()));
    }
    if (!j.is_object()) throw fail("expected a JSON object");
    j["script"] = "";
    const SftRecord record = parse_sft_record(j.dump(), path, line_number);
    RlPrompt p;
    p.prompt = record.prompt;
    p.workload = record.workload;
    p.existing_script = record.existing_script;
    p.origin = origin;
    ir::PrimFunc func;
    try {
      func = ops::OpRegistry::global().make_workload(p.workload).func;
    } catch (const UserError& e) {
      throw fail(fmt::format("workload '{}' does not build: {}", p.workload, e.what()));
    }
    if (p.existing_script) {
      const Replayed replayed = replay_script(*p.existing_script, func);
      if (!replayed.func) throw fail(fmt::format("'existing_script' does not replay on {}: {}", p.workload, replayed.why));
    }
    prompts.push_back(std::move(p));
  });
  if (prompts.empty()) throw UserError(fmt::format("{}: no prompts", path));
  return prompts;
}

std::string_view reward_outcome_name(RewardOutcome outcome) {
  switch (outcome) {
    case RewardOutcome::kNotApplied: return "not_applied";
    case RewardOutcome::kFailed: return "failed";
    case RewardOutcome::kVerified: return "verified";
  }
  return "?";
}

MeasuredRewarder::MeasuredRewarder(RewardEnvironmentFactory factory, RewardSettings settings)
    : factory_(std::move(factory)), settings_(settings) {
  if (!(settings_.bonus_floor + settings_.base_reward > std::max(settings_.apply_penalty, settings_.failure_penalty)))
    throw UserError(fmt::format("reward: base {} + bonus floor {} must exceed both penalties ({}, {}): a verified "
                                "kernel must never score as low as a failed one",
                                settings_.base_reward, settings_.bonus_floor, settings_.apply_penalty,
                                settings_.failure_penalty));
}

MeasuredRewarder::Workload& MeasuredRewarder::workload(const std::string& spec) {
  auto it = workloads_.find(spec);
  if (it == workloads_.end()) {
    Workload w;
    w.func = ops::OpRegistry::global().make_workload(spec).func;
    w.environment = factory_(spec, w.func);
    DRAGON_CHECK(w.environment.measurer != nullptr, "the reward environment of {} has no measurer", spec);
    it = workloads_.emplace(spec, std::move(w)).first;
  }
  return it->second;
}

double MeasuredRewarder::baseline_ms(const RlPrompt& prompt) {
  const std::pair<std::string, std::string> key{prompt.workload, prompt.existing_script.value_or("")};
  if (auto it = baselines_.find(key); it != baselines_.end()) return it->second;
  Workload& w = workload(prompt.workload);
  ir::PrimFunc baseline = w.environment.default_schedule;
  if (prompt.existing_script) {
    Replayed replayed = replay_script(*prompt.existing_script, w.func);
    if (!replayed.func)
      throw UserError(fmt::format("{}: 'existing_script' does not replay: {}", prompt.origin, replayed.why));
    baseline = *replayed.func;
  }
  const search::MeasureResult result = w.environment.measurer->measure({baseline}).at(0);
  if (!result.ok())
    throw UserError(fmt::format("{}: the prompt's {} does not verify on {} ({}: {}), so no speedup can be measured",
                                prompt.origin, prompt.existing_script ? "script" : "default schedule",
                                w.environment.measurer->device(), search::measure_status_id(result.status),
                                result.error));
  baselines_[key] = *result.median_ms();
  return *result.median_ms();
}

std::vector<ScoredScript> MeasuredRewarder::score(const RlPrompt& prompt, const std::vector<SampledScript>& scripts) {
  const double baseline = baseline_ms(prompt);
  Workload& w = workload(prompt.workload);
  std::vector<ScoredScript> out(scripts.size());
  std::vector<ir::PrimFunc> batch;
  std::vector<size_t> batch_index;
  for (size_t i = 0; i < scripts.size(); ++i) {
    ScoredScript& s = out[i];
    s.outcome = RewardOutcome::kNotApplied;
    s.reward = settings_.apply_penalty;
    if (!scripts[i].ended) {
      s.why = "sampling stopped before the end of the script";
      continue;
    }
    Replayed replayed = replay_script(scripts[i].text, w.func);
    if (!replayed.func) {
      s.why = replayed.why;
      continue;
    }
    batch.push_back(std::move(*replayed.func));
    batch_index.push_back(i);
  }
  if (batch.empty()) return out;
  const std::vector<search::MeasureResult> results = w.environment.measurer->measure(batch);
  for (size_t k = 0; k < batch_index.size(); ++k) {
    ScoredScript& s = out[batch_index[k]];
    s.measured = results.at(k);
    const std::optional<double> ms = s.measured->median_ms();
    if (s.measured->status == search::MeasureStatus::kApplyFailed) {
      s.why = s.measured->error;  // outcome and reward stay those of a script that does not apply
    } else if (!s.measured->ok() || !ms || !(*ms > 0)) {
      s.outcome = RewardOutcome::kFailed;
      s.reward = settings_.failure_penalty;
      s.why = fmt::format("{}: {}", search::measure_status_id(s.measured->status), s.measured->error);
    } else {
      s.outcome = RewardOutcome::kVerified;
      s.speedup = baseline / *ms;
      s.reward = settings_.base_reward + std::max(settings_.bonus_floor, std::log(*s.speedup));
    }
  }
  return out;
}

int64_t MeasuredRewarder::measured() const {
  int64_t n = 0;
  for (const auto& [spec, w] : workloads_) n += w.environment.measurer->costs().candidates;
  return n;
}

int64_t MeasuredRewarder::cached() const {
  int64_t n = 0;
  for (const auto& [spec, w] : workloads_) n += w.environment.measurer->costs().cached;
  return n;
}

}  // namespace dragon::model
