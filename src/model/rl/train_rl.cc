// The RL loop (rl/train_rl.h): prompts in a seeded order, G constrained samples each with
// their log-probs, rewards from the Rewarder, one GRPO update per step, progress lines and
// resumable checkpoints. Every sample's draw is seeded from (seed, step, prompt slot,
// sample), so the step count is the whole random state a resumed run needs.
#include "dragon/model/rl/train_rl.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "../checkpoint.h"
#include "../sampling.h"
#include "dragon/model/script_constraint.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"
#include "grpo.h"

namespace dragon::model {
namespace {

namespace fs = std::filesystem;

// The settings a resumed run keeps from its checkpoint: all but where it writes, how much
// of it runs now and on what.
std::string settings_json(const RlSettings& s) {
  nlohmann::ordered_json j;
  j["init"] = s.init;
  j["prompts"] = s.prompts;
  j["steps"] = s.steps;
  j["group"] = s.group;
  j["prompts_per_step"] = s.prompts_per_step;
  j["updates"] = s.updates;
  j["lr"] = s.lr;
  j["grad_clip"] = s.grad_clip;
  j["weight_decay"] = s.weight_decay;
  j["temperature"] = s.temperature;
  j["max_new_tokens"] = s.max_new_tokens;
  j["clip_low"] = s.clip_low;
  j["clip_high"] = s.clip_high;
  j["scale_by_std"] = s.scale_by_std;
  j["kl_coef"] = s.kl_coef;
  j["checkpoint_every"] = s.checkpoint_every;
  j["seed"] = s.seed;
  j["apply_penalty"] = s.reward.apply_penalty;
  j["failure_penalty"] = s.reward.failure_penalty;
  j["base_reward"] = s.reward.base_reward;
  j["bonus_floor"] = s.reward.bonus_floor;
  return j.dump();
}

RlSettings settings_from_checkpoint(const std::string& json, RlSettings base, const std::string& origin) {
  try {
    nlohmann::json j = nlohmann::json::parse(json);
    base.init = j.at("init").get<std::string>();
    base.prompts = j.at("prompts").get<std::string>();
    base.steps = j.at("steps").get<int64_t>();
    base.group = j.at("group").get<int64_t>();
    base.prompts_per_step = j.at("prompts_per_step").get<int64_t>();
    base.updates = j.at("updates").get<int64_t>();
    base.lr = j.at("lr").get<double>();
    base.grad_clip = j.at("grad_clip").get<double>();
    base.weight_decay = j.at("weight_decay").get<double>();
    base.temperature = j.at("temperature").get<double>();
    base.max_new_tokens = j.at("max_new_tokens").get<int64_t>();
    base.clip_low = j.at("clip_low").get<double>();
    base.clip_high = j.at("clip_high").get<double>();
    base.scale_by_std = j.at("scale_by_std").get<bool>();
    base.kl_coef = j.at("kl_coef").get<double>();
    base.checkpoint_every = j.at("checkpoint_every").get<int64_t>();
    base.seed = j.at("seed").get<uint64_t>();
    base.reward.apply_penalty = j.at("apply_penalty").get<double>();
    base.reward.failure_penalty = j.at("failure_penalty").get<double>();
    base.reward.base_reward = j.at("base_reward").get<double>();
    base.reward.bonus_floor = j.at("bonus_floor").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw TensorFileError(fmt::format("{}: metadata 'rl.settings' is malformed ({})", origin, e.what()));
  }
  return base;
}

void check_settings(const RlSettings& s) {
  auto bad = [](std::string_view why) { return UserError(fmt::format("train rl: {}", why)); };
  if (s.steps <= 0 || s.prompts_per_step <= 0 || s.checkpoint_every <= 0 || s.max_new_tokens < 0 || s.updates <= 0)
    throw bad("--steps, --prompts-per-step, --updates, --checkpoint-every must be positive and --max-tokens not negative");
  if (s.group < 2) throw bad(fmt::format("--group {}: a group needs at least 2 samples to compare", s.group));
  if (!(s.temperature > 0)) throw bad(fmt::format("--temperature {}: sampling needs a positive temperature", s.temperature));
  if (!(s.lr > 0)) throw bad(fmt::format("--lr {} must be positive", s.lr));
  if (!(s.clip_low > 0 && s.clip_low < 1) || !(s.clip_high > 0))
    throw bad(fmt::format("--clip-low {} must be in (0, 1) and --clip-high {} positive", s.clip_low, s.clip_high));
  if (s.kl_coef < 0) throw bad(fmt::format("--kl {} must not be negative", s.kl_coef));
}

Transformer load_any_model(const std::string& path, const char* what) {
  if (!fs::is_regular_file(path)) throw UserError(fmt::format("train rl: no {} at {}", what, path));
  return load_model(read_tensor_file(path), path);
}

uint64_t sample_seed(uint64_t seed, int64_t step, int64_t slot, int64_t sample) {
  // splitmix64 of the combined coordinates: distinct, well-mixed seeds per draw.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(step) << 32) ^
               (static_cast<uint64_t>(slot) << 16) ^ static_cast<uint64_t>(sample);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

RlSummary train_rl(const RlSettings& requested, Rewarder& rewarder, const std::function<void(const std::string&)>& log) {
  const std::string checkpoint_path = (fs::path(requested.out_dir) / "checkpoint.safetensors").string();
  const std::string weights_path = (fs::path(requested.out_dir) / "model.safetensors").string();
  RlSettings s = requested;
  std::optional<TensorFile> resumed;
  if (s.resume) {
    if (!fs::is_regular_file(checkpoint_path))
      throw UserError(fmt::format("train rl --resume: no checkpoint at {}", checkpoint_path));
    resumed = read_tensor_file(checkpoint_path);
    s = settings_from_checkpoint(resumed->meta("rl.settings", checkpoint_path), s, checkpoint_path);
  }
  check_settings(s);
  if (s.threads > 0) torch::set_num_threads(s.threads);
  if (s.device != "cpu" && s.device != "cuda" && s.device != "auto")
    throw UserError(fmt::format("train rl: device '{}' is not cpu, cuda or auto", s.device));
  if (s.device == "cuda" && !torch::cuda::is_available()) throw UserError("train rl: --device cuda, but no CUDA device");
  const bool cuda = s.device == "cuda" || (s.device == "auto" && torch::cuda::is_available());
  const torch::Device device = cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  if (!cuda) at::globalContext().setFlushDenormal(true);

  const std::vector<RlPrompt> prompts = read_rl_prompts(s.prompts);
  Transformer model = resumed ? load_model(*resumed, checkpoint_path) : load_any_model(s.init, "--init model");
  model->to(device);
  // The prompt form the model reads goes on with it (the SFT model's metadata).
  const std::map<std::string, std::string> prompt_meta =
      prompt_metadata(resumed ? *resumed : read_tensor_file(s.init));
  std::optional<Transformer> reference;
  if (s.kl_coef > 0) {
    reference = load_any_model(s.init, "--init model (the KL reference)");
    (*reference)->to(device);
    (*reference)->eval();
    for (auto& p : (*reference)->parameters()) p.set_requires_grad(false);
  }
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (auto& p : model->named_parameters()) named.emplace_back(p.key(), p.value());
  AdamW optimizer(named, AdamW::Settings{.weight_decay = s.weight_decay});
  TrainProgress progress;
  if (resumed) {
    load_optimizer(*resumed, optimizer, checkpoint_path);
    progress = load_progress(*resumed, checkpoint_path).value_or(TrainProgress{});
    resumed.reset();
  }

  // Each prompt's tokens as training framed it.
  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  const script::TokenId eos = tokenizer.special(script::SpecialToken::kEos);
  const script::TokenId pad = tokenizer.special(script::SpecialToken::kPad);
  std::vector<std::vector<script::TokenId>> prompt_tokens;
  for (const RlPrompt& p : prompts) {
    prompt_tokens.push_back(encode_prompt(tokenizer, p.prompt, p.workload, p.existing_script));
    if (static_cast<int64_t>(prompt_tokens.back().size()) >= model->config.context)
      throw UserError(fmt::format("{}: the prompt is {} tokens, the model reads at most {}", p.origin,
                                  prompt_tokens.back().size(), model->config.context));
  }
  const int64_t n = static_cast<int64_t>(prompts.size());
  log(fmt::format("train rl: {} prompts, {} per step, {} samples each, on {}; {} steps from step {}", n,
                  s.prompts_per_step, s.group, cuda ? "cuda" : "cpu", s.steps, progress.step));

  auto save = [&]() {
    fs::create_directories(s.out_dir);
    std::map<std::string, std::string> meta = prompt_meta;
    meta["rl.settings"] = settings_json(s);
    write_tensor_file(checkpoint_path, checkpoint_tensors(model, StorageType::kF32, &optimizer, progress, meta));
  };
  const GrpoSettings grpo{.clip_low = s.clip_low,
                          .clip_high = s.clip_high,
                          .scale_by_std = s.scale_by_std,
                          .kl_coef = s.kl_coef,
                          .temperature = s.temperature};
  std::vector<int64_t> order = epoch_order(n, s.seed, progress.epoch);
  RlSummary summary;
  const int64_t first_step = progress.step;
  const int64_t last_step = s.run_steps > 0 ? std::min(s.steps, first_step + s.run_steps) : s.steps;
  while (progress.step < last_step) {
    const auto start = std::chrono::steady_clock::now();
    RlStepStats stats;
    stats.step = progress.step + 1;
    std::vector<Rollout> rollouts;
    std::vector<double> rewards;
    double log_speedup_sum = 0;
    int64_t verified = 0, applied = 0;
    std::map<std::string, int64_t> failures;  // why samples were not verified, by kind
    for (int64_t slot = 0; slot < s.prompts_per_step; ++slot) {
      if (progress.cursor >= n) {
        ++progress.epoch;
        progress.cursor = 0;
        order = epoch_order(n, s.seed, progress.epoch);
      }
      const int64_t index = order[progress.cursor++];
      const RlPrompt& prompt = prompts[index];
      const ir::PrimFunc func = ops::OpRegistry::global().make_workload(prompt.workload).func;
      // The group is sampled side by side, each sample with a constraint of its own.
      std::vector<std::unique_ptr<ScriptConstraint>> constraints;
      std::vector<TokenConstraint*> constraint_of;
      std::vector<SamplingSettings> sampling;
      std::vector<Rollout> group(static_cast<size_t>(s.group));
      std::vector<PolicyRecord*> records;
      for (int64_t g = 0; g < s.group; ++g) {
        constraints.push_back(std::make_unique<ScriptConstraint>(tokenizer, func));
        constraint_of.push_back(constraints.back().get());
        sampling.push_back(SamplingSettings{.temperature = s.temperature,
                                            .top_p = 1.0,
                                            .max_new_tokens = new_token_limit(s.max_new_tokens, model->config),
                                            .seed = sample_seed(s.seed, progress.step, slot, g)});
        group[static_cast<size_t>(g)].prompt = prompt_tokens[index];
        records.push_back(&group[static_cast<size_t>(g)].policy);
      }
      const std::vector<Generation> generations =
          generate_side_by_side(model, prompt_tokens[index], eos, sampling, constraint_of, records);
      std::vector<SampledScript> scripts;
      for (size_t g = 0; g < generations.size(); ++g) {
        scripts.push_back({tokenizer.decode(generations[g].tokens), generations[g].stop == Generation::Stop::kEos});
        rollouts.push_back(std::move(group[g]));
      }
      std::vector<ScoredScript> scores = rewarder.score(prompt, scripts);
      DRAGON_CHECK(scores.size() == scripts.size(), "the rewarder scored {} of {} scripts", scores.size(), scripts.size());
      for (size_t g = 0; g < scores.size(); ++g) {
        rewards.push_back(scores[g].reward);
        if (scores[g].outcome == RewardOutcome::kFailed && scores[g].measured) {
          ++failures[std::string(search::measure_status_id(scores[g].measured->status))];
        } else if (scores[g].outcome == RewardOutcome::kNotApplied) {
          ++failures[scripts[g].ended ? "not_applied" : "unfinished"];
        }
        applied += scores[g].outcome != RewardOutcome::kNotApplied ? 1 : 0;
        if (scores[g].outcome == RewardOutcome::kVerified) {
          ++verified;
          log_speedup_sum += std::log(*scores[g].speedup);
        }
        stats.scripts.push_back(scripts[g].text);
        stats.scores.push_back(std::move(scores[g]));
      }
    }
    const std::vector<std::optional<double>> advantages = group_advantages(rewards, s.group, s.scale_by_std);
    std::vector<Rollout> kept;
    for (size_t i = 0; i < rollouts.size(); ++i) {
      if (!advantages[i]) continue;
      rollouts[i].advantage = *advantages[i];
      // A sample that stopped before its first token has no action (generation stops only
      // at EOS, which is an action, or at a limit after at least one token).
      if (!rollouts[i].policy.actions.empty()) kept.push_back(std::move(rollouts[i]));
    }
    for (size_t begin = 0; begin < advantages.size(); begin += static_cast<size_t>(s.group))
      (advantages[begin] ? stats.groups_used : stats.groups_dropped) += 1;
    if (!kept.empty()) {
      const PolicyBatch batch = make_policy_batch(kept, model->config.vocab, pad, device);
      for (int64_t u = 0; u < s.updates; ++u) {
        const GrpoStepResult r =
            grpo_step(model, optimizer, batch, grpo, reference ? &*reference : nullptr, s.lr, s.grad_clip);
        stats.loss = r.loss;
        stats.grad_norm = r.grad_norm;
        stats.clipped_fraction = r.clipped_fraction;
        stats.mean_ratio = r.mean_ratio;
        stats.kl = r.kl;
      }
      stats.updated = true;
    }
    ++progress.step;
    stats.samples = static_cast<int64_t>(rewards.size());
    for (double r : rewards) stats.mean_reward += r;
    stats.mean_reward /= static_cast<double>(stats.samples);
    stats.correct_rate = static_cast<double>(verified) / static_cast<double>(stats.samples);
    stats.applied_rate = static_cast<double>(applied) / static_cast<double>(stats.samples);
    stats.mean_speedup = verified > 0 ? std::exp(log_speedup_sum / static_cast<double>(verified)) : 0;
    stats.rewards = rewards;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string update = "no update (every group's rewards equal)";
    if (stats.updated)
      update = fmt::format("loss {:.4f}  grad {:.3f}  ratio {:.3f}  clipped {:.3f}  kl {:.4f}", stats.loss,
                           stats.grad_norm, stats.mean_ratio, stats.clipped_fraction, stats.kl);
    std::string why_not;
    for (const auto& [kind, count] : failures) why_not += fmt::format("{}{} {}", why_not.empty() ? "" : ", ", kind, count);
    log(fmt::format("step {}/{}  reward {:.3f}  correct {:.2f}  applied {:.2f}  speedup {}  groups {}/{}  {}  {:.1f} "
                    "s/step{}",
                    progress.step, s.steps, stats.mean_reward, stats.correct_rate, stats.applied_rate,
                    verified > 0 ? fmt::format("{:.3f}x", stats.mean_speedup) : "-", stats.groups_used,
                    stats.groups_used + stats.groups_dropped, update, seconds,
                    why_not.empty() ? "" : fmt::format("  (not verified: {})", why_not)));
    summary.steps.push_back(std::move(stats));
    if (progress.step % s.checkpoint_every == 0 || progress.step == last_step) save();
  }
  fs::create_directories(s.out_dir);
  write_tensor_file(weights_path, checkpoint_tensors(model, StorageType::kBF16, nullptr, std::nullopt, prompt_meta));
  summary.steps_done = progress.step - first_step;
  summary.checkpoint = checkpoint_path;
  log(fmt::format("train rl: done at step {}; {} and {} (bf16 weights)", progress.step, checkpoint_path, weights_path));
  return summary;
}

}  // namespace dragon::model
