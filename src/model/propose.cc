// propose(): prompt, sample, decode (propose.h).
#include "dragon/model/propose.h"

#include <memory>

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
  // Tensor cores on the GPU; on the CPU float32 products are the faster ones.
  if (cuda) model->set_compute_type(torch::kBFloat16);

  // The prompt exactly as training framed it.
  const script::Tokenizer& tokenizer = script::Tokenizer::standard();
  const std::vector<script::TokenId> prompt =
      encode_prompt(tokenizer, form, request.workload, request.existing_script);
  if (static_cast<int64_t>(prompt.size()) >= model->config.context) {
    throw UserError(fmt::format("propose: the prompt of '{}' is {} tokens, the model reads at most {}", request.workload,
                                prompt.size(), model->config.context));
  }

  // The attempts are sampled side by side; each has a constraint of its own (a decoder
  // follows one prefix).
  std::vector<std::unique_ptr<ScriptConstraint>> constraints;
  std::vector<TokenConstraint*> constraint_of;
  std::vector<SamplingSettings> sampling;
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(request.workload).func;
  for (int i = 0; i < request.attempts; ++i) {
    if (request.constrained) constraints.push_back(std::make_unique<ScriptConstraint>(tokenizer, func, request.end_check,
                                                                                  request.write_on_tokens));
    constraint_of.push_back(request.constrained ? constraints.back().get() : nullptr);
    sampling.push_back(SamplingSettings{.temperature = request.temperature,
                                        .top_p = request.top_p,
                                        .max_new_tokens = new_token_limit(request.max_new_tokens, model->config),
                                        .seed = request.seed + static_cast<uint64_t>(i)});
  }
  const std::vector<Generation> generations = generate_side_by_side(
      model, prompt, tokenizer.special(script::SpecialToken::kEos), sampling, constraint_of);
  std::vector<Proposal> out;
  for (int i = 0; i < request.attempts; ++i) {
    const Generation& generation = generations[static_cast<size_t>(i)];
    Proposal p;
    p.attempt = i;
    p.script = tokenizer.decode(generation.tokens);
    p.stop = std::string(stop_name(generation.stop));
    p.tokens = static_cast<int64_t>(generation.tokens.size());
    p.seconds = generation.seconds;
    p.constraint_seconds = generation.constraint_seconds;
    p.ends_refused = generation.ends_refused;
    if (request.constrained) p.last_refusal = constraints[static_cast<size_t>(i)]->last_refusal();
    if (on_each) on_each(p);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace dragon::model
