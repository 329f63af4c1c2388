// ModelConfig: parameter count, validation, presets and the JSON form. No libtorch here.
#include "dragon/model/model_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "dragon/support/error.h"

namespace dragon::model {

int64_t ModelConfig::parameter_count() const {
  const int64_t per_block = 2 * d_model + 4 * d_model * d_model + 3 * d_model * ffn;
  return vocab * d_model + layers * per_block + d_model;
}

void ModelConfig::validate() const {
  auto positive = [](int64_t value, const char* name) {
    if (value <= 0) throw UserError(fmt::format("model config: {} must be positive (got {})", name, value));
  };
  positive(vocab, "vocab");
  positive(d_model, "d_model");
  positive(layers, "layers");
  positive(heads, "heads");
  positive(ffn, "ffn");
  positive(context, "context");
  if (d_model % heads != 0)
    throw UserError(fmt::format("model config: d_model {} is not divisible by heads {}", d_model, heads));
  if (head_dim() % 2 != 0)
    throw UserError(fmt::format("model config: head_dim {} (d_model / heads) must be even for rotary positions",
                                head_dim()));
  if (!(rope_base > 1.0)) throw UserError(fmt::format("model config: rope_base must exceed 1 (got {})", rope_base));
  if (!(norm_eps > 0.0)) throw UserError(fmt::format("model config: norm_eps must be positive (got {})", norm_eps));
}

ModelConfig ModelConfig::preset(std::string_view name, int64_t vocab) {
  ModelConfig c;
  c.vocab = vocab;
  if (name == "tiny") {
    c.d_model = 64, c.layers = 2, c.heads = 4, c.ffn = 176, c.context = 512;
  } else if (name == "small") {
    c.d_model = 320, c.layers = 8, c.heads = 8, c.ffn = 768, c.context = 1024;
  } else if (name == "base") {
    c.d_model = 512, c.layers = 8, c.heads = 8, c.ffn = 1376, c.context = 2048;
  } else {
    throw UserError(fmt::format("model config: unknown preset '{}' (presets: {})", name,
                                fmt::join(preset_names(), ", ")));
  }
  c.validate();
  return c;
}

std::vector<std::string> ModelConfig::preset_names() { return {"tiny", "small", "base"}; }

std::string ModelConfig::to_json() const {
  nlohmann::ordered_json j;
  j["vocab"] = vocab;
  j["d_model"] = d_model;
  j["layers"] = layers;
  j["heads"] = heads;
  j["ffn"] = ffn;
  j["context"] = context;
  j["rope_base"] = rope_base;
  j["norm_eps"] = norm_eps;
  return j.dump();
}

ModelConfig ModelConfig::from_json(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("model config: not JSON: {}", e.what()));
  }
  if (!j.is_object()) throw UserError("model config: expected a JSON object");
  auto integer = [&](const char* name) {
    if (!j.contains(name) || !j[name].is_number_integer())
      throw UserError(fmt::format("model config: field '{}' missing or not an integer", name));
    return j[name].get<int64_t>();
  };
  auto real = [&](const char* name) {
    if (!j.contains(name) || !j[name].is_number())
      throw UserError(fmt::format("model config: field '{}' missing or not a number", name));
    return j[name].get<double>();
  };
  ModelConfig c;
  c.vocab = integer("vocab");
  c.d_model = integer("d_model");
  c.layers = integer("layers");
  c.heads = integer("heads");
  c.ffn = integer("ffn");
  c.context = integer("context");
  c.rope_base = real("rope_base");
  c.norm_eps = real("norm_eps");
  c.validate();
  return c;
}

}  // namespace dragon::model
