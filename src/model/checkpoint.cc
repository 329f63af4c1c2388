// Converting the model, optimizer and progress to and from a TensorFile (checkpoint.h).
#include "checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "dragon/script/tokenizer.h"

namespace dragon::model {
namespace {

constexpr std::string_view kFormat = "dragon-checkpoint-v1";

torch::ScalarType scalar_type(StorageType type) {
  switch (type) {
    case StorageType::kF32: return torch::kFloat32;
    case StorageType::kBF16: return torch::kBFloat16;
    case StorageType::kF16: return torch::kFloat16;
    case StorageType::kI64: return torch::kInt64;
    case StorageType::kI32: return torch::kInt32;
  }
  DRAGON_UNREACHABLE("storage type");
}

int64_t parse_int(const TensorFile& file, std::string_view key, std::string_view origin) {
  const std::string& text = file.meta(key, origin);
  try {
    size_t used = 0;
    const int64_t value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw TensorFileError(fmt::format("{}: metadata '{}' is '{}', not an integer", origin, key, text));
}

// Copies a stored tensor into `target` (same shape), converting its element type.
void copy_into(torch::Tensor target, const StoredTensor& stored, std::string_view origin) {
  if (stored.shape != target.sizes().vec())
    throw TensorFileError(fmt::format("{}: tensor '{}' has shape [{}], the model needs [{}]", origin, stored.name,
                                      fmt::join(stored.shape, ","), fmt::join(target.sizes().vec(), ",")));
  torch::NoGradGuard no_grad;
  target.copy_(from_stored(stored));
}

}  // namespace

StoredTensor to_stored(const std::string& name, const torch::Tensor& tensor, StorageType type) {
  torch::Tensor host = tensor.detach().to(torch::kCPU, scalar_type(type)).contiguous();
  StoredTensor out;
  out.name = name;
  out.type = type;
  out.shape = host.sizes().vec();
  out.data.assign(static_cast<const char*>(host.data_ptr()), host.numel() * host.element_size());
  return out;
}

torch::Tensor from_stored(const StoredTensor& stored) {
  torch::Tensor t = torch::empty(stored.shape, torch::TensorOptions().dtype(scalar_type(stored.type)));
  std::memcpy(t.data_ptr(), stored.data.data(), stored.data.size());
  return t;
}

TensorFile checkpoint_tensors(const Transformer& model, StorageType weights, const AdamW* optimizer,
                              const std::optional<TrainProgress>& progress,
                              const std::map<std::string, std::string>& extra) {
  TensorFile file;
  file.metadata = extra;
  file.metadata["format"] = kFormat;
  file.metadata["config"] = model->config.to_json();
  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  file.metadata["tokenizer"] = std::string(tokenizer.version());
  file.metadata["tokenizer_checksum"] = fmt::format("{:016x}", tokenizer.checksum());
  for (const auto& named : model->named_parameters()) {
    file.tensors.push_back(to_stored("model." + named.key(), named.value(), weights));
  }
  if (optimizer != nullptr) {
    for (const AdamW::ParamState& s : optimizer->state()) {
      file.tensors.push_back(to_stored("adamw.exp_avg." + s.name, s.exp_avg, StorageType::kF32));
      file.tensors.push_back(to_stored("adamw.exp_avg_sq." + s.name, s.exp_avg_sq, StorageType::kF32));
    }
    const AdamW::Settings& st = optimizer->settings();
    file.metadata["adamw.steps"] = std::to_string(optimizer->steps());
    file.metadata["adamw.settings"] =
        fmt::format("beta1={} beta2={} eps={} weight_decay={}", st.beta1, st.beta2, st.eps, st.weight_decay);
  }
  if (progress) {
    file.metadata["progress.step"] = std::to_string(progress->step);
    file.metadata["progress.epoch"] = std::to_string(progress->epoch);
    file.metadata["progress.cursor"] = std::to_string(progress->cursor);
  }
  return file;
}

Transformer load_model(const TensorFile& file, std::string_view origin) {
  const std::string& format = file.meta("format", origin);
  if (format != kFormat)
    throw TensorFileError(fmt::format("{}: format '{}', expected '{}'", origin, format, kFormat));
  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  const std::string checksum = fmt::format("{:016x}", tokenizer.checksum());
  if (file.meta("tokenizer", origin) != tokenizer.version() || file.meta("tokenizer_checksum", origin) != checksum)
    throw TensorFileError(fmt::format("{}: trained with tokenizer {} ({}), this build has {} ({})", origin,
                                      file.meta("tokenizer", origin), file.meta("tokenizer_checksum", origin),
                                      tokenizer.version(), checksum));
  ModelConfig config;
  try {
    config = ModelConfig::from_json(file.meta("config", origin));
  } catch (const TensorFileError&) {
    throw;
  } catch (const UserError& e) {
    throw TensorFileError(fmt::format("{}: {}", origin, e.what()));
  }
  Transformer model(config, /*seed=*/0);
  for (auto& named : model->named_parameters()) copy_into(named.value(), file.at("model." + named.key(), origin), origin);
  return model;
}

void load_optimizer(const TensorFile& file, AdamW& optimizer, std::string_view origin) {
  for (AdamW::ParamState& s : optimizer.state()) {
    copy_into(s.exp_avg, file.at("adamw.exp_avg." + s.name, origin), origin);
    copy_into(s.exp_avg_sq, file.at("adamw.exp_avg_sq." + s.name, origin), origin);
  }
  optimizer.set_steps(parse_int(file, "adamw.steps", origin));
}

std::optional<TrainProgress> load_progress(const TensorFile& file, std::string_view origin) {
  if (!file.metadata.contains("progress.step")) return std::nullopt;
  return TrainProgress{parse_int(file, "progress.step", origin), parse_int(file, "progress.epoch", origin),
                       parse_int(file, "progress.cursor", origin)};
}

data::PromptForm model_prompt_form(const TensorFile& file, std::string_view origin) {
  auto it = file.metadata.find("prompt");
  if (it == file.metadata.end()) return data::PromptForm::kIr;
  try {
    return data::parse_prompt_form(it->second, fmt::format("{}: metadata 'prompt'", origin));
  } catch (const UserError& e) {
    throw TensorFileError(e.what());  // a damaged model file, as every other bad entry is
  }
}

std::map<std::string, std::string> prompt_metadata(const TensorFile& file) {
  auto it = file.metadata.find("prompt");
  if (it == file.metadata.end()) return {};
  return {{"prompt", it->second}};
}

}  // namespace dragon::model
