// Checkpoints of the little dragon in our tensor file layout (tensor_file.h,
// docs/checkpoint-format.md): the config, the weights (f32 or bf16), and for resuming the
// optimizer's moments and where training was. Not the layout itself. A libtorch header:
// src/model and its tests only.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "dragon/data/prompt.h"
#include "dragon/model/tensor_file.h"
#include "training.h"
#include "transformer.h"

namespace dragon::model {

// Where a run stands: enough to continue it as if it had never stopped.
struct TrainProgress {
  int64_t step = 0;   // optimizer steps done
  int64_t epoch = 0;  // passes over the training examples begun
  int64_t cursor = 0; // examples of this epoch's order consumed
  friend bool operator==(const TrainProgress&, const TrainProgress&) = default;
};

// A tensor's bytes in the file's layout (converted to `type`; contiguous, on the CPU) and
// back (a float32 tensor from F32 or BF16, int64 from I64 ...). from_stored copies.
StoredTensor to_stored(const std::string& name, const torch::Tensor& tensor, StorageType type);
torch::Tensor from_stored(const StoredTensor& stored);

// The model's parameters as "model.<name>" in `weights` precision, its config and the
// tokenizer's version and checksum in the metadata; with an optimizer, its moments
// ("adamw.exp_avg.<name>", "adamw.exp_avg_sq.<name>", always F32), step count and
// settings; with progress, the step, epoch and cursor. `extra` metadata is added as is
// (the trainer's settings).
TensorFile checkpoint_tensors(const Transformer& model, StorageType weights, const AdamW* optimizer,
                              const std::optional<TrainProgress>& progress,
                              const std::map<std::string, std::string>& extra = {});

// A model built from a checkpoint's config, weights copied in. Throws TensorFileError
// naming `origin` for a file of another format, a tokenizer other than the standard one,
// a missing weight or a weight of the wrong shape.
Transformer load_model(const TensorFile& file, std::string_view origin);
// Restores an optimizer made for the same model (moments, step count); throws like
// load_model when the file has no optimizer state or it does not fit.
void load_optimizer(const TensorFile& file, AdamW& optimizer, std::string_view origin);
std::optional<TrainProgress> load_progress(const TensorFile& file, std::string_view origin);
// The prompt form the model was trained on (metadata "prompt"; IR text when absent, as
// before the entry existed); TensorFileError naming `origin` for an unknown form.
data::PromptForm model_prompt_form(const TensorFile& file, std::string_view origin);
// {"prompt": form} when the file names one, else nothing: what a model derived from it
// (RL from an SFT model) writes on.
std::map<std::string, std::string> prompt_metadata(const TensorFile& file);

}  // namespace dragon::model
