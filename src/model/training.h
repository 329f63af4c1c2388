// One SFT optimisation step and what it needs: batches of tokenized examples with the
// loss mask, the masked next-token loss, AdamW, gradient clipping. Not the loop, data
// order or checkpoints (sft.cc, checkpoint.h). A libtorch header: src/model and its
// tests only.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dragon/model/sft_data.h"
#include "transformer.h"

namespace dragon::model {

// Targets that carry no loss (prompt tokens and padding); cross_entropy skips them.
inline constexpr int64_t kIgnoredTarget = -100;

struct Batch {
  torch::Tensor inputs;   // (B, T) int64: tokens[0..n-1) of each example, padded
  torch::Tensor targets;  // (B, T) int64: tokens[1..n), kIgnoredTarget before the script and on padding
  int64_t tokens = 0;         // positions read that are not padding
  int64_t target_tokens = 0;  // positions that carry loss
  int64_t squared_lengths = 0;  // the sum over examples of their length squared (attention's work)
};

// The floating-point operations of one training step (forward and backward) on `batch`,
// padding not counted: 6 per parameter per token (the tied embedding counted once, as the
// output head's product), and causal attention's 6 x layers x d_model per visible
// (query, key) pair, half the square (PaLM's appendix B counts the whole square).
double training_flops(const ModelConfig& config, const Batch& batch);

// Pads to the longest example with `pad`; the loss covers the script tokens and EOS:
// target position i (predicting tokens[i + 1]) counts when i + 1 >= script_start.
Batch make_batch(std::span<const TokenizedExample* const> examples, script::TokenId pad, torch::Device device);

// The mean cross-entropy over the batch's target tokens: logits (B, T, V) vs targets.
torch::Tensor sft_loss(Transformer& model, const Batch& batch);

// AdamW with decoupled weight decay (Loshchilov & Hutter), written here rather than
// torch::optim::AdamW because its state must be saved in our checkpoint format and
// torch's optimizer keeps it in a map keyed by tensor addresses whose key type changed
// between libtorch 1.13 and 2.x. Weight decay applies to matrices (embedding, linear
// weights), not to norm gains. Tested against torch::optim::AdamW.
class AdamW {
 public:
  struct Settings {
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weight_decay = 0.1;
  };
  AdamW(std::vector<std::pair<std::string, torch::Tensor>> named_parameters, Settings settings);

  // One update with learning rate `lr` from the parameters' current gradients.
  void step(double lr);
  void zero_grad();

  int64_t steps() const { return steps_; }
  const Settings& settings() const { return settings_; }
  // Per parameter, in construction order: name, first and second moment (same shape).
  struct ParamState {
    std::string name;
    torch::Tensor param, exp_avg, exp_avg_sq;
    bool decay = true;
  };
  std::vector<ParamState>& state() { return state_; }
  const std::vector<ParamState>& state() const { return state_; }
  void set_steps(int64_t steps) { steps_ = steps; }

 private:
  Settings settings_;
  std::vector<ParamState> state_;
  int64_t steps_ = 0;
};

// The order of epoch `epoch` over n examples (SFT) or prompts (RL): Fisher-Yates driven by
// mt19937_64, whose output the standard fixes (std::shuffle's use of it is not), so every
// machine trains alike.
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch);

struct StepResult {
  double loss = 0;
  double grad_norm = 0;  // before clipping
};

// Forward, masked loss, backward, clip the global gradient norm to `grad_clip` (<= 0: no
// clipping), one AdamW step at `lr`.
StepResult train_step(Transformer& model, AdamW& optimizer, const Batch& batch, double lr, double grad_clip);

}  // namespace dragon::model

namespace dragon::model {

// The model's loss and greedy accuracy on examples, without gradients. Greedy decoding
// writes an example's script exactly when the argmax at every target position (each
// script token and EOS, the script given so far) is the target, so exact_match is
// greedy generation's exact-match rate, computed in one forward pass per batch.
struct Evaluation {
  double loss = 0;            // mean cross-entropy per target token
  double token_accuracy = 0;  // target positions whose argmax is the target
  double exact_match = 0;     // examples whose every target position is right
  int64_t examples = 0;
};
Evaluation evaluate(Transformer& model, std::span<const TokenizedExample> examples, int64_t batch_size,
                    script::TokenId pad);

}  // namespace dragon::model
