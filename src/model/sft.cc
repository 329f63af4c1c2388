// The SFT loop (sft.h): examples read and tokenized once, a seeded order per epoch, a
// training step per batch, progress lines, validation and resumable checkpoints.
#include "dragon/model/sft.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>

#include "checkpoint.h"
#include "dragon/data/prompt.h"
#include "dragon/model/lr_schedule.h"
#include "dragon/support/error.h"
#include "training.h"

namespace dragon::model {
namespace {

namespace fs = std::filesystem;

struct Examples {
  std::vector<TokenizedExample> examples;
  int64_t skipped_too_long = 0;
};

// A sequence of n tokens is read as n - 1 inputs: it fits when n - 1 <= context.
Examples tokenize_all(const std::vector<SftRecord>& records, const script::Tokenizer& tokenizer, int64_t context) {
  Examples out;
  for (const SftRecord& record : records) {
    TokenizedExample e = tokenize(tokenizer, to_example(record));
    if (static_cast<int64_t>(e.tokens.size()) - 1 > context) {
      ++out.skipped_too_long;
      continue;
    }
    out.examples.push_back(std::move(e));
  }
  return out;
}

// The settings a resumed run keeps from its checkpoint (everything that shapes the
// model, the curve or the data order).
std::string settings_json(const SftSettings& s) {
  nlohmann::ordered_json j;
  j["preset"] = s.preset;
  j["prompt"] = s.prompt;
  j["context"] = s.context;
  j["steps"] = s.steps;
  j["batch_size"] = s.batch_size;
  j["lr"] = s.lr;
  j["floor_ratio"] = s.floor_ratio;
  j["warmup"] = s.warmup;
  j["weight_decay"] = s.weight_decay;
  j["grad_clip"] = s.grad_clip;
  j["seed"] = s.seed;
  return j.dump();
}

SftSettings settings_from_checkpoint(const std::string& json, SftSettings base, const std::string& origin) {
  try {
    nlohmann::json j = nlohmann::json::parse(json);
    base.preset = j.at("preset").get<std::string>();
    base.prompt = j.value("prompt", std::string("ir"));  // checkpoints before the setting: IR text
    base.context = j.at("context").get<int64_t>();
    base.steps = j.at("steps").get<int64_t>();
    base.batch_size = j.at("batch_size").get<int64_t>();
    base.lr = j.at("lr").get<double>();
    base.floor_ratio = j.at("floor_ratio").get<double>();
    base.warmup = j.at("warmup").get<int64_t>();
    base.weight_decay = j.at("weight_decay").get<double>();
    base.grad_clip = j.at("grad_clip").get<double>();
    base.seed = j.at("seed").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw TensorFileError(fmt::format("{}: metadata 'sft.settings' is malformed ({})", origin, e.what()));
  }
  return base;
}

// 12345.6 -> "12,346".
std::string thousands(double value) {
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && digits[i - 1] != '-' && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

SftSummary train_sft(const SftSettings& requested, const std::function<void(const std::string&)>& log) {
  const std::string checkpoint_path = (fs::path(requested.out_dir) / "checkpoint.safetensors").string();
  const std::string weights_path = (fs::path(requested.out_dir) / "model.safetensors").string();
  SftSettings s = requested;
  std::optional<TensorFile> resumed;
  if (s.resume) {
    if (!fs::is_regular_file(checkpoint_path))
      throw UserError(fmt::format("train sft --resume: no checkpoint at {}", checkpoint_path));
    resumed = read_tensor_file(checkpoint_path);
    s = settings_from_checkpoint(resumed->meta("sft.settings", checkpoint_path), s, checkpoint_path);
  }
  // Read (and checked) before the model is built, so bad data fails fast.
  const SftSplits data = read_sft_splits(s.data_dir, data::parse_prompt_form(s.prompt, "train sft --prompt"));
  // The form the model learns to read, in its files for sampling (none when the lines mix).
  std::map<std::string, std::string> prompt_meta;
  if (std::optional<PromptForm> form = shared_prompt_form(data.train))
    prompt_meta["prompt"] = std::string(data::prompt_form_name(*form));
  if (s.batch_size <= 0 || s.steps <= 0 || s.log_every <= 0 || s.checkpoint_every <= 0)
    throw UserError("train sft: steps, batch size, log and checkpoint intervals must be positive");
  if (s.time_budget_s < 0) throw UserError("train sft: the time budget must not be negative");
  if (s.threads > 0) torch::set_num_threads(s.threads);
  const bool cuda = s.device == "cuda" || (s.device == "auto" && torch::cuda::is_available());
  if (s.device != "cpu" && s.device != "cuda" && s.device != "auto")
    throw UserError(fmt::format("train sft: device '{}' is not cpu, cuda or auto", s.device));
  if (s.device == "cuda" && !torch::cuda::is_available()) throw UserError("train sft: --device cuda, but no CUDA device");
  const torch::Device device = cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  // Subnormal floats (tiny gradients once the loss is low) take a slow path on x86 CPUs.
  if (!cuda) at::globalContext().setFlushDenormal(true);

  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  const script::TokenId pad = tokenizer.special(script::SpecialToken::kPad);
  ModelConfig config = ModelConfig::preset(s.preset, static_cast<int64_t>(tokenizer.size()));
  if (s.context > 0) config.context = s.context;

  Transformer model = resumed ? load_model(*resumed, checkpoint_path) : Transformer(config, s.seed);
  config = model->config;
  model->to(device);
  if (s.precision != "auto" && s.precision != "bf16" && s.precision != "f32")
    throw UserError(fmt::format("train sft: precision '{}' is not bf16, f32 or auto", s.precision));
  const bool bf16 = s.precision == "bf16" || (s.precision == "auto" && cuda);
  model->set_compute_type(bf16 ? torch::kBFloat16 : torch::kFloat32);
  // Model FLOPs utilisation needs the device's peak: given, or the H100/H200's bf16 one.
  const double peak_tflops = s.peak_tflops > 0 ? s.peak_tflops : (cuda && bf16 ? 989.5 : 0.0);
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (auto& p : model->named_parameters()) named.emplace_back(p.key(), p.value());
  AdamW optimizer(named, AdamW::Settings{.weight_decay = s.weight_decay});
  TrainProgress progress;
  if (resumed) {
    load_optimizer(*resumed, optimizer, checkpoint_path);
    progress = load_progress(*resumed, checkpoint_path).value_or(TrainProgress{});
    resumed.reset();
  }

  Examples train = tokenize_all(data.train, tokenizer, config.context);
  if (train.examples.empty())
    throw UserError(fmt::format("train sft: {} has no training example that fits the context of {} tokens ({} longer)",
                                data.source, config.context, train.skipped_too_long));
  Examples valid = tokenize_all(data.validation, tokenizer, config.context);
  const int64_t n = static_cast<int64_t>(train.examples.size());
  log(fmt::format("train sft: data from {}", data.source));
  log(fmt::format("train sft: {} parameters (d_model {}, {} layers, {} heads, ffn {}, context {}) on {}; {} training "
                  "examples ({} longer than the context skipped), {} validation; {} steps of {} from step {}; "
                  "products in {}",
                  thousands(static_cast<double>(config.parameter_count())), config.d_model, config.layers,
                  config.heads, config.ffn, config.context, cuda ? "cuda" : "cpu", n, train.skipped_too_long,
                  valid.examples.size(), s.steps, s.batch_size, progress.step, bf16 ? "bf16" : "f32"));

  const LrSchedule schedule{.peak = s.lr, .floor_ratio = s.floor_ratio, .warmup = s.warmup, .total = s.steps};
  std::vector<int64_t> order = epoch_order(n, s.seed, progress.epoch);
  auto next_batch = [&]() {
    std::vector<const TokenizedExample*> batch;
    while (static_cast<int64_t>(batch.size()) < s.batch_size) {
      if (progress.cursor >= n) {
        ++progress.epoch;
        progress.cursor = 0;
        order = epoch_order(n, s.seed, progress.epoch);
      }
      batch.push_back(&train.examples[order[progress.cursor++]]);
    }
    return batch;
  };
  auto save = [&]() {
    fs::create_directories(s.out_dir);
    std::map<std::string, std::string> meta = prompt_meta;
    meta["sft.settings"] = settings_json(s);
    write_tensor_file(checkpoint_path, checkpoint_tensors(model, StorageType::kF32, &optimizer, progress, meta));
  };
  auto validate = [&]() {
    if (valid.examples.empty()) return;
    Evaluation e = evaluate(model, valid.examples, s.batch_size, pad);
    log(fmt::format("valid step {}: loss {:.4f}, token accuracy {:.4f}, greedy exact match {:.4f} ({} examples)",
                    progress.step, e.loss, e.token_accuracy, e.exact_match, e.examples));
  };

  SftSummary summary;
  summary.examples = n;
  summary.skipped_too_long = train.skipped_too_long;
  summary.parameters = config.parameter_count();
  double train_seconds = 0, window_seconds = 0, window_loss = 0, window_flops = 0;
  int64_t run_tokens = 0, window_tokens = 0, window_steps = 0;
  const int64_t first_step = progress.step;
  int64_t last_step = s.run_steps > 0 ? std::min(s.steps, first_step + s.run_steps) : s.steps;
  const auto run_start = std::chrono::steady_clock::now();
  while (progress.step < last_step) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<const TokenizedExample*> examples = next_batch();
    Batch batch = make_batch(examples, pad, device);
    const double lr = schedule.at(progress.step);
    StepResult r;
    try {
      r = train_step(model, optimizer, batch, lr, s.grad_clip);
    } catch (const c10::Error& e) {
      // Attention is computed whole (batch x heads x length^2 scores a layer): the batch
      // and the context are what to lower, which the caller can do and libtorch's text
      // does not say.
      const std::string what = e.what();  // CUDA's allocator, and the CPU's
      if (what.find("out of memory") == std::string::npos && what.find("not enough memory") == std::string::npos) throw;
      throw UserError(fmt::format("train sft: out of {} memory at step {}: a batch of {} examples up to {} tokens "
                                  "({} parameters, context {}); lower --batch or --context",
                                  cuda ? "GPU" : "host", progress.step + 1, examples.size(), batch.inputs.size(1),
                                  thousands(static_cast<double>(config.parameter_count())), config.context));
    }
    ++progress.step;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    train_seconds += seconds;
    window_seconds += seconds;
    run_tokens += batch.tokens;
    window_tokens += batch.tokens;
    window_flops += training_flops(config, batch);
    window_loss += r.loss;
    ++window_steps;
    summary.last_loss = r.loss;
    summary.losses.push_back(r.loss);
    // Out of time: this step becomes the run's last, logged and checkpointed as such.
    if (s.time_budget_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count() >= s.time_budget_s) {
      if (progress.step < last_step) summary.stopped_by_time_budget = true;
      last_step = progress.step;
    }
    if (progress.step % s.log_every == 0 || progress.step == last_step) {
      const double tokens_per_second = window_tokens / window_seconds;
      const double gflops = window_flops / window_seconds / 1e9;
      const std::string mfu = peak_tflops > 0 ? fmt::format("  MFU {:.1f}%", 100 * gflops / (peak_tflops * 1e3)) : "";
      log(fmt::format("step {}/{}  loss {:.4f}  lr {:.2e}  grad {:.3f}  {} tok/s  {:.1f} GFLOP/s{}  {:.3f} s/step  "
                      "epoch {} ({}/{})",
                      progress.step, s.steps, window_loss / window_steps, lr, r.grad_norm,
                      thousands(tokens_per_second), gflops, mfu, window_seconds / window_steps, progress.epoch,
                      progress.cursor, n));
      window_seconds = window_loss = window_flops = 0;
      window_tokens = window_steps = 0;
    }
    if (progress.step % s.checkpoint_every == 0 || progress.step == last_step) {
      save();
      validate();
    }
  }
  fs::create_directories(s.out_dir);
  write_tensor_file(weights_path, checkpoint_tensors(model, StorageType::kBF16, nullptr, std::nullopt, prompt_meta));
  summary.steps_done = progress.step - first_step;
  summary.tokens_per_second = train_seconds > 0 ? run_tokens / train_seconds : 0;
  summary.checkpoint = checkpoint_path;
  log(fmt::format("train sft: {} at step {} of {}; {} and {} (bf16 weights)",
                  summary.stopped_by_time_budget ? "stopped by the time budget" : "done", progress.step, s.steps,
                  checkpoint_path, weights_path));
  return summary;
}

}  // namespace dragon::model
