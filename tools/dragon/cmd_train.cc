// dragon train sft: supervised fine-tuning of the little dragon from a data set's shards or
// a folder of JSONL examples (docs/model.md), resumable; dragon train rl: reinforcement
// learning from a checkpoint with rewards measured on the target. Argument parsing only:
// the loops are model::train_sft and model::train_rl, the measurer is the target's
// (tune_environments.h). In `dragon` it re-executes the same command line as dragon-model
// (model_binary.h), the program that links libtorch.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "model_binary.h"
#ifdef DRAGON_MODEL_IN_PROCESS
#include "tune_environments.h"
#endif
#include "dragon/model/rl/train_rl.h"
#include "dragon/model/sft.h"
#include "dragon/support/error.h"

namespace dragon::cli {

Command add_train_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("train", "Train the little dragon");
  sub->require_subcommand(1);
  auto s = std::make_shared<model::SftSettings>();
  CLI::App* sft = sub->add_subcommand(
      "sft", "Supervised fine-tuning on a data set from `dragon data build` (its train split; validation on its "
      "validation split) or on DIR/train.jsonl (validation on DIR/valid.jsonl when present)");
  sft->add_option("--data", s->data_dir,
                  "A data set's folder (manifest.json and shards), or a folder with train.jsonl and optionally "
                  "valid.jsonl")
      ->required();
  sft->add_option("--out", s->out_dir, "Folder for checkpoint.safetensors and model.safetensors")->required();
  sft->add_flag("--resume", s->resume, "Continue from OUT/checkpoint.safetensors with its settings");
  sft->add_option("--preset", s->preset, "Model size: tiny, small (10.0M parameters) or base (26.7M)")
      ->capture_default_str();
  sft->add_option("--prompt", s->prompt,
                  "How a data set's workloads are framed: ir (canonical IR text) or spec (the op spec, far shorter); "
                  "stored in the model's files, which propose and optimize follow")
      ->check(CLI::IsMember({"ir", "spec"}))
      ->capture_default_str();
  sft->add_option("--context", s->context, "Longest sequence in tokens (0: the preset's)")->capture_default_str();
  sft->add_option("--steps", s->steps, "Optimizer steps in all")->capture_default_str();
  sft->add_option("--run-steps", s->run_steps, "At most this many steps now, then checkpoint (0: all)")
      ->capture_default_str();
  sft->add_option("--time-budget", s->time_budget_s,
                  "Seconds; this run stops at the next step boundary after them, checkpointed (0: none)")
      ->capture_default_str();
  sft->add_option("--batch", s->batch_size, "Examples per step")->capture_default_str();
  sft->add_option("--lr", s->lr, "Peak learning rate")->capture_default_str();
  sft->add_option("--warmup", s->warmup, "Warm-up steps")->capture_default_str();
  sft->add_option("--weight-decay", s->weight_decay, "AdamW weight decay")->capture_default_str();
  sft->add_option("--grad-clip", s->grad_clip, "Global gradient norm limit (0: none)")->capture_default_str();
  sft->add_option("--log-every", s->log_every, "Steps between progress lines")->capture_default_str();
  sft->add_option("--checkpoint-every", s->checkpoint_every, "Steps between checkpoints and validation")
      ->capture_default_str();
  sft->add_option("--seed", s->seed, "Seed of the initial weights and the data order")->capture_default_str();
  sft->add_option("--threads", s->threads, "CPU threads for libtorch (0: its default)")->capture_default_str();
  sft->add_option("--device", s->device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  sft->add_option("--precision", s->precision,
                  "Type of the matrix products: bf16 (mixed precision), f32, or auto (bf16 on the GPU, f32 on the CPU)")
      ->check(CLI::IsMember({"bf16", "f32", "auto"}))
      ->capture_default_str();
  sft->add_option("--peak-tflops", s->peak_tflops,
                  "The device's dense peak for the MFU in progress lines (0: 989.5, the H100/H200 bf16 peak, for bf16 "
                  "on the GPU; none otherwise)")
      ->capture_default_str();

  auto r = std::make_shared<model::RlSettings>();
  auto target = std::make_shared<std::string>("cpu");
  CLI::App* rl = sub->add_subcommand(
      "rl", "Reinforcement learning (GRPO) from a checkpoint; rewards from the target's verified timings");
  rl->add_option("--init", r->init, "The SFT checkpoint or model.safetensors to start from")->required();
  rl->add_option("--prompts", r->prompts, "JSONL prompts: workload (and existing_script for refinement)")->required();
  rl->add_option("--out", r->out_dir, "Folder for checkpoint.safetensors and model.safetensors")->required();
  rl->add_option("--steps", r->steps, "GRPO steps in all")->required();
  rl->add_flag("--resume", r->resume, "Continue from OUT/checkpoint.safetensors with its settings");
  rl->add_option("--run-steps", r->run_steps, "At most this many steps now, then checkpoint (0: all)")
      ->capture_default_str();
  rl->add_option("--group", r->group, "Samples per prompt (G)")->capture_default_str();
  rl->add_option("--prompts-per-step", r->prompts_per_step, "Prompts per step")->capture_default_str();
  rl->add_option("--target", *target, "Where rewards are measured: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  rl->add_option("--updates", r->updates, "Optimizer steps on each step's samples (> 1: off-policy, clipped)")
      ->capture_default_str();
  rl->add_option("--lr", r->lr, "Learning rate")->capture_default_str();
  rl->add_option("--grad-clip", r->grad_clip, "Global gradient norm limit (0: none)")->capture_default_str();
  rl->add_option("--temperature", r->temperature, "Sampling temperature (> 0)")->capture_default_str();
  rl->add_option("--max-tokens", r->max_new_tokens, "Longest script in tokens (0: until the model's context is full)")->capture_default_str();
  rl->add_option("--clip-low", r->clip_low, "Lower ratio clip (1 - x)")->capture_default_str();
  rl->add_option("--clip-high", r->clip_high, "Upper ratio clip (1 + x)")->capture_default_str();
  rl->add_flag("--scale-by-std", r->scale_by_std, "Divide advantages by their group's standard deviation");
  rl->add_option("--kl", r->kl_coef, "Weight of the KL term to the --init model (0: none)")->capture_default_str();
  rl->add_option("--apply-penalty", r->reward.apply_penalty, "Reward of a script that does not replay")
      ->capture_default_str();
  rl->add_option("--failure-penalty", r->reward.failure_penalty, "Reward of one that fails to build or verify")
      ->capture_default_str();
  rl->add_option("--base-reward", r->reward.base_reward, "Reward of a verified kernel before its latency bonus")
      ->capture_default_str();
  rl->add_option("--checkpoint-every", r->checkpoint_every, "Steps between checkpoints")->capture_default_str();
  rl->add_option("--seed", r->seed, "Seed of the prompt order and the samples")->capture_default_str();
  rl->add_option("--threads", r->threads, "CPU threads for libtorch (0: its default)")->capture_default_str();
  rl->add_option("--device", r->device, "Where the model runs: cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
#ifdef DRAGON_MODEL_IN_PROCESS
  return [s, sft, r, rl, target]() {
    auto print = [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    };
    if (sft->parsed()) {
      model::train_sft(*s, print);
      return 0;
    }
    if (!rl->parsed()) return 1;
    // The measurers first: the GPU one starts its worker before libtorch touches the GPU.
    std::shared_ptr<TuneEnvironments> environments;
    try {
      environments = make_tune_environments({.target = *target, .rules_file = ""});
    } catch (const UserError& e) {
      throw UserError(fmt::format("train rl --target {}: {}", *target, e.what()));
    }
    model::MeasuredRewarder rewarder(
        [environments](const std::string& spec, const ir::PrimFunc& func) {
          search::TaskEnvironment env = environments->environment({spec, spec, func, 1});
          return model::RewardEnvironment{env.measurer, env.default_schedule};
        },
        r->reward);
    model::train_rl(*r, rewarder, print);
    std::printf("the measurers were given %lld candidates, %lld answered from their kernel-hash caches; %s\n",
                static_cast<long long>(rewarder.measured()), static_cast<long long>(rewarder.cached()),
                environments->costs_summary().c_str());
    return 0;
  };
#else
  // The options' storage must outlive parsing, which writes into it before the command runs.
  return [s, r, target]() -> int { exec_model_binary(); };
#endif
}

}  // namespace dragon::cli
