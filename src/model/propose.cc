// propose(): prompt, sample, decode (propose.h).
#include "dragon/model/propose.h"

#include <chrono>

#include <fmt/format.h>

#include "checkpoint.h"
#include "dragon/model/script_constraint.h"
#include "dragon/model/tensor_file.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/tokenizer.h"
#include "dragon/support/error.h"
#include "sampling.h"

namespace dragon::model {

std::vector<Proposal> propose(const ProposeRequest& request, const std::function<void(const Proposal&)>& on_each) {
  if (request.attempts <= 0) throw UserError("propose: --attempts must be positive");
  if (request.threads > 0) torch::set_num_threads(request.threads);
  const bool cuda = request.device == "cuda" || (request.device == "auto" && torch::cuda::is_available());
  if (request.device != "cpu" && request.device != "cuda" && request.device != "auto")
    throw UserError(fmt::format("propose: device '{}' is not cpu, cuda or auto", request.device));
  if (request.device == "cuda" && !torch::cuda::is_available()) throw UserError("propose: --device cuda, but no CUDA device");

  const TensorFile file = read_tensor_file(request.model_path);
  Transformer model = load_model(file, request.model_path);
  const PromptForm form = request.prompt ? *request.prompt : model_prompt_form(file, request.model_path);
  model->to(cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU));

  // The prompt exactly as training framed it.
  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  const std::vector<script::TokenId> prompt =
      encode_prompt(tokenizer, form, request.workload, request.existing_script);
  if (static_cast<int64_t>(prompt.size()) >= model->config.context) {
    throw UserError(fmt::format("propose: the prompt of '{}' is {} tokens, the model reads at most {}", request.workload,
                                prompt.size(), model->config.context));
  }

  std::optional<ScriptConstraint> constraint;
  if (request.constrained) {
    constraint.emplace(tokenizer, ops::OpRegistry::global().make_workload(request.workload).func);
  }
  std::vector<Proposal> out;
  for (int i = 0; i < request.attempts; ++i) {
    const auto start = std::chrono::steady_clock::now();
    SamplingSettings sampling{.temperature = request.temperature,
                              .top_p = request.top_p,
                              .max_new_tokens = request.max_new_tokens,
                              .seed = request.seed + static_cast<uint64_t>(i)};
    const Generation generation = generate(model, prompt, tokenizer.special(script::SpecialToken::kEos), sampling,
                                           constraint ? &*constraint : nullptr);
    Proposal p;
    p.attempt = i;
    p.script = tokenizer.decode(generation.tokens);
    p.stop = std::string(stop_name(generation.stop));
    p.tokens = static_cast<int64_t>(generation.tokens.size());
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (on_each) on_each(p);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace dragon::model
