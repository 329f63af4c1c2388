// Reinforcement learning of the little dragon from an SFT checkpoint (docs/model.md,
// "RL"): each step samples G scripts for each of its prompts with the constrained sampler,
// scores them with a Rewarder (reward.h: the measurer's checks and timer), and makes one
// GRPO update (src/model/rl/grpo.h); resumable checkpoints. The libtorch-free entry point
// the CLI calls; without libtorch it throws a UserError saying so.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dragon/model/rl/reward.h"

namespace dragon::model {

struct RlSettings {
  std::string init;          // the SFT checkpoint or weights the policy starts from (and the KL reference)
  std::string prompts;       // JSONL (reward.h, read_rl_prompts)
  std::string out_dir;       // checkpoint.safetensors (resumable), model.safetensors (bf16 weights)
  bool resume = false;       // continue from out_dir/checkpoint.safetensors, with its settings
  int64_t steps = 100;       // GRPO steps in all
  int64_t run_steps = 0;     // at most this many steps in this run (0: until `steps`)
  int64_t group = 8;         // samples per prompt
  int64_t prompts_per_step = 1;
  int64_t updates = 1;       // optimizer steps on each step's samples; after the first the
                             // policy has moved from the sampler's and the ratio clip acts
  double lr = 1e-5;
  double grad_clip = 1.0;
  double weight_decay = 0.0;
  double temperature = 1.0;  // sampling (no nucleus cut: every token's probability is the policy's)
  int64_t max_new_tokens = 0;  // 0: until the model's context is full (propose.h says why)
  double clip_low = 0.2, clip_high = 0.28;
  bool scale_by_std = false;
  double kl_coef = 0.0;      // > 0: a KL term to the frozen --init model
  int64_t checkpoint_every = 10;
  uint64_t seed = 1;         // prompt order and every sample's draw
  int threads = 0;
  std::string device = "auto";
  RewardSettings reward;
};

// One step's statistics (also its progress line).
struct RlStepStats {
  int64_t step = 0;
  int64_t samples = 0;
  double mean_reward = 0;
  double correct_rate = 0;     // verified samples / samples
  double applied_rate = 0;     // samples that replayed / samples
  double mean_speedup = 0;     // geometric mean over the verified samples (0: none)
  int64_t groups_used = 0;     // groups with unequal rewards, which carry the update
  int64_t groups_dropped = 0;
  // Of the step's last update (the first has ratio 1 up to rounding: nothing is clipped).
  double loss = 0, grad_norm = 0, clipped_fraction = 0, mean_ratio = 0, kl = 0;
  bool updated = false;        // false when every group was dropped
  std::vector<double> rewards;       // every sample's, in order
  std::vector<std::string> scripts;  // every sample's text, in order
  std::vector<ScoredScript> scores;  // every sample's, in order
};

struct RlSummary {
  int64_t steps_done = 0;
  std::vector<RlStepStats> steps;  // this run's
  std::string checkpoint;
};

// Trains and writes checkpoints; every progress line goes to `log`. Throws UserError for a
// bad checkpoint, prompts file or setting, a --resume without a checkpoint, a build
// without libtorch.
RlSummary train_rl(const RlSettings& settings, Rewarder& rewarder, const std::function<void(const std::string&)>& log);

}  // namespace dragon::model
