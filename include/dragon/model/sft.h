// Supervised fine-tuning of the little dragon from a folder of JSONL examples
// (sft_data.h, docs/model.md): the training loop with its data order, progress lines,
// validation and resumable checkpoints. The libtorch-free entry point the CLI calls.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dragon::model {

struct SftSettings {
  std::string data_dir;   // train.jsonl (required), valid.jsonl (optional)
  std::string out_dir;    // checkpoint.safetensors (resumable), model.safetensors (bf16 weights)
  bool resume = false;    // continue from out_dir/checkpoint.safetensors, with its settings
  std::string preset = "small";  // ModelConfig::preset
  std::string prompt = "ir";     // a data set's prompts: "ir" (canonical IR text) or "spec"
                                 // (the op spec; far shorter). JSONL lines carry their own
  int64_t context = 0;    // 0: the preset's
  int64_t steps = 2000;   // optimizer steps in all (the learning-rate curve spans them)
  int64_t run_steps = 0;  // at most this many steps in this run, then checkpoint and return
                          // (a run cut into pieces by --resume); 0: until `steps`
  double time_budget_s = 0;  // this run stops at the first step boundary after this many
                             // seconds, checkpointed like a --run-steps stop; 0: none
  int64_t batch_size = 16;
  double lr = 1e-3;       // peak learning rate
  double floor_ratio = 0.1;
  int64_t warmup = 100;
  double weight_decay = 0.1;
  double grad_clip = 1.0;
  int64_t log_every = 10;         // steps between progress lines
  int64_t checkpoint_every = 250; // steps between checkpoints (and validation)
  uint64_t seed = 1;              // initial weights and data order
  int threads = 0;                // CPU threads for libtorch; 0: its default
  std::string device = "auto";    // "cpu", "cuda" or "auto" (cuda when there is one)
  // The matrix products' type: "bf16" (mixed precision: float32 parameters, optimizer,
  // norms and softmax), "f32", or "auto": bf16 on the GPU, f32 on the CPU (whose bf16
  // products are slower than float32's). A run's choice; not stored with the checkpoint.
  std::string precision = "auto";
  // The device's dense peak for the MFU in progress lines, TFLOP/s; 0: 989.5 (H100 and
  // H200 SXM bf16, REFERENCE-performance.md) for bf16 on the GPU, none otherwise.
  double peak_tflops = 0;
};

struct SftSummary {
  int64_t steps_done = 0;
  int64_t examples = 0;          // training examples used
  int64_t skipped_too_long = 0;  // examples longer than the context, not used
  int64_t parameters = 0;
  double last_loss = 0;
  std::vector<double> losses;    // each step's training loss in this run
  double tokens_per_second = 0;  // over this run's steps (not counting checkpoints)
  std::string checkpoint;        // the last checkpoint written
  bool stopped_by_time_budget = false;  // steps were left when the time budget ran out
};

// Trains and writes checkpoints; every progress and validation line goes to `log`.
// Throws UserError for missing or malformed data, a --resume without a checkpoint, or a
// build without libtorch.
SftSummary train_sft(const SftSettings& settings, const std::function<void(const std::string&)>& log);

}  // namespace dragon::model
