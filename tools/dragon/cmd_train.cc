// dragon train sft: supervised fine-tuning of the little dragon from a folder of JSONL
// examples (docs/model.md), resumable. Argument parsing only: the loop is
// model::train_sft. libtorch costs seconds to load, so `dragon` does not link it: its
// `train` re-executes the same command line as dragon-train (this file and main.cc built
// with DRAGON_TRAIN_IN_PROCESS, linked with libtorch), found beside the dragon binary.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "commands.h"
#include "dragon/model/sft.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"

namespace dragon::cli {
namespace {

#ifndef DRAGON_TRAIN_IN_PROCESS
// Replaces this process by dragon-train with the same arguments (read back from
// /proc/self/cmdline, so nothing is lost in re-spelling them).
int run_in_dragon_train() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw UserError("dragon train: cannot find this program's folder (/proc/self/exe): " + error.message());
  const std::string child = (self.parent_path() / "dragon-train").string();
  if (!std::filesystem::exists(child))
    throw UserError("dragon train: " + child + " is not there (it is built only where CMake finds libtorch)");
  const std::string cmdline = read_text_file("/proc/self/cmdline");
  std::vector<std::string> args;
  for (size_t start = 0; start < cmdline.size();) {
    const size_t end = cmdline.find('\0', start);
    args.push_back(cmdline.substr(start, end - start));
    start = end == std::string::npos ? cmdline.size() : end + 1;
  }
  args.at(0) = child;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(child.c_str(), argv.data());
  throw UserError("dragon train: cannot run " + child + ": " + std::strerror(errno));
}
#endif

}  // namespace

Command add_train_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("train", "Train the little dragon");
  sub->require_subcommand(1);
  auto s = std::make_shared<model::SftSettings>();
  CLI::App* sft = sub->add_subcommand(
      "sft", "Supervised fine-tuning on DIR/train.jsonl (validation on DIR/valid.jsonl when present)");
  sft->add_option("--data", s->data_dir, "Folder with train.jsonl and optionally valid.jsonl")->required();
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
#ifdef DRAGON_TRAIN_IN_PROCESS
  return [s]() {
    model::train_sft(*s, [](const std::string& line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    });
    return 0;
  };
#else
  return []() { return run_in_dragon_train(); };
#endif
}

}  // namespace dragon::cli
