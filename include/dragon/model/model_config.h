// The little dragon's shape: one commented struct that says how big every part of the
// decoder-only transformer is, its named presets and its JSON form (stored in every
// checkpoint). Not the training settings (sft.h) and not the model itself (src/model).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::model {

struct ModelConfig {
  int64_t vocab = 0;       // V: token ids 0..V-1, the tokenizer's vocabulary (Tokenizer::size())
  int64_t d_model = 320;   // C: width of the residual stream and of every token embedding
  int64_t layers = 8;      // L: transformer blocks (attention + SwiGLU feed-forward each)
  int64_t heads = 8;       // H: attention heads; head_dim = C / H, even (rotary rotates pairs)
  int64_t ffn = 768;       // F: hidden width of the SwiGLU feed-forward (2-3 C)
  int64_t context = 1024;  // T: the longest sequence (prompt + script) the model reads
  double rope_base = 10000.0;  // rotary positions: pair i turns by pos / base^(2i / head_dim)
  double norm_eps = 1e-5;      // RMSNorm: x / sqrt(mean(x^2) + eps) * gain

  int64_t head_dim() const { return d_model / heads; }
  // Trainable parameters: the embedding (tied with the output head), per block two norm
  // gains, q/k/v/o (4 C^2) and the SwiGLU's gate, up and down (3 C F), and the final norm.
  int64_t parameter_count() const;
  // Throws UserError naming the field when a size is not positive, C is not divisible by
  // H, or head_dim is odd.
  void validate() const;

  // Presets by name with `vocab` filled in: "tiny" (tests, 0.27M parameters), "small"
  // (10.0M with the standard vocabulary: 19.1 MiB of bf16 weights, under the 20 MiB a
  // shipped checkpoint may take), "base" (26.7M). Throws UserError listing the names for
  // another name.
  static ModelConfig preset(std::string_view name, int64_t vocab);
  static std::vector<std::string> preset_names();

  // One JSON object with every field; from_json throws UserError on a missing or
  // mistyped field and validates.
  std::string to_json() const;
  static ModelConfig from_json(std::string_view text);

  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

}  // namespace dragon::model
