// dragon train sft: supervised fine-tuning of the little dragon from a data set's shards or
// a folder of JSONL examples (docs/model.md), resumable. Argument parsing only: the loop is
// model::train_sft. In `dragon` it re-executes the same command line as dragon-model
// (model_binary.h), the program that links libtorch.
#include <cstdio>
#include <memory>

#include "commands.h"
#include "model_binary.h"
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
  sft->add_option("--context", s->context, "Longest sequence in tokens (0: the preset's)")->capture_default_str();
  sft->add_option("--steps", s->steps, "Optimizer steps in all")->capture_default_str();
  sft->add_option("--run-steps", s->run_steps, "At most this many steps now, then checkpoint (0: all)")
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
#ifdef DRAGON_MODEL_IN_PROCESS
  return [s]() {
    model::train_sft(*s, [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    });
    return 0;
  };
#else
  return []() -> int { exec_model_binary(); };
#endif
}

}  // namespace dragon::cli
