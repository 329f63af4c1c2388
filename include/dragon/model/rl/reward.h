// The reward of reinforcement learning (docs/model.md, "RL"): a sampled script is judged
// only by what the measurer found (its full checks, then its timer), never by anything the
// script or the model claims. A script that does not end, decode or replay gets the apply
// penalty; one that fails to build, run or verify gets the failure penalty; a verified one
// gets the base reward plus log(speedup) over the prompt's script (refinement) or the
// target's default schedule (construction), the bonus floored so that no verified kernel
// scores below a failed one. libtorch-free.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/model/sft_data.h"
#include "dragon/search/measure_result.h"
#include "dragon/search/measurer.h"

namespace dragon::model {

// One prompt of RL: a workload (construction), or a workload and a script to improve.
struct RlPrompt {
  PromptForm prompt = PromptForm::kIr;
  std::string workload;                        // op spec
  std::optional<std::string> existing_script;  // refinement: canonical
  std::string origin;                          // "FILE:LINE", for errors
};
// The JSONL prompts file: one object per line with the fields of the SFT data (task,
// prompt, workload, existing_script; a 'script' is ignored, so SFT data serves as prompts).
// Throws UserError "FILE:LINE: why" for malformed lines, a workload that does not build or
// an existing script that does not replay on it; and for a file without prompts.
std::vector<RlPrompt> read_rl_prompts(const std::string& path);

struct RewardSettings {
  double apply_penalty = -1.0;    // did not end, decode or replay
  double failure_penalty = -1.0;  // rejected, failed to build or run, crashed, timed out, wrong result
  double base_reward = 1.0;       // verified
  double bonus_floor = -1.0;      // the latency bonus log(speedup) is at least this
};

enum class RewardOutcome : uint8_t { kNotApplied, kFailed, kVerified };
std::string_view reward_outcome_name(RewardOutcome outcome);

struct ScoredScript {
  RewardOutcome outcome = RewardOutcome::kNotApplied;
  double reward = 0;
  std::optional<double> speedup;  // verified only: the baseline's median / this kernel's median
  std::optional<search::MeasureResult> measured;  // what the measurer said (absent when not applied)
  std::string why;                // the failure, when not verified
};

// One sampled script to be judged: its text and whether sampling ended it (EOS).
struct SampledScript {
  std::string text;
  bool ended = true;
};

class Rewarder {
 public:
  virtual ~Rewarder() = default;
  // One score per script, in order; the scripts of one prompt come together so that their
  // builds can run as one batch.
  virtual std::vector<ScoredScript> score(const RlPrompt& prompt, const std::vector<SampledScript>& scripts) = 0;
};

// What measuring a workload on the target needs: the measurer (which caches results by
// kernel hash: an identical kernel is measured once) and what an empty script stands for.
struct RewardEnvironment {
  std::shared_ptr<search::Measurer> measurer;
  ir::PrimFunc default_schedule;
};
using RewardEnvironmentFactory = std::function<RewardEnvironment(const std::string& spec, const ir::PrimFunc& func)>;

// The reward from real measurements: one environment per workload, made on first use;
// each prompt's baseline (its script, or the default schedule) measured once.
class MeasuredRewarder final : public Rewarder {
 public:
  MeasuredRewarder(RewardEnvironmentFactory factory, RewardSettings settings);
  std::vector<ScoredScript> score(const RlPrompt& prompt, const std::vector<SampledScript>& scripts) override;
  // The baseline median of a prompt (measured on first use). Throws UserError naming the
  // prompt when its baseline does not verify: no speedup could be computed.
  double baseline_ms(const RlPrompt& prompt);
  // Candidates given to the measurers and how many were answered from their caches.
  int64_t measured() const;
  int64_t cached() const;

 private:
  struct Workload {
    ir::PrimFunc func;
    RewardEnvironment environment;
  };
  Workload& workload(const std::string& spec);
  RewardEnvironmentFactory factory_;
  RewardSettings settings_;
  std::map<std::string, Workload> workloads_;
  std::map<std::pair<std::string, std::string>, double> baselines_;  // (spec, script or "") -> ms
};

}  // namespace dragon::model
