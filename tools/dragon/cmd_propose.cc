// dragon propose: the scripts the little dragon writes for a workload, unmeasured
// (`dragon optimize` measures them). Argument parsing and printing only: the sampling is
// model::propose. In `dragon` it re-executes as dragon-model (model_binary.h).
#include <cstdio>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "dragon/bench/gpu_tuning.h"
#include "dragon/lower/target.h"
#include "dragon/model/propose.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "model_binary.h"
#include "proposal_lines.h"

namespace dragon::cli {
namespace {

struct ProposeOptions {
  model::ProposeRequest request;
  std::string refine_file;
  std::string prompt;  // empty: the model's own form
  bool unconstrained = false;
  std::string lowers_for;  // "cuda": an attempt ends only where its script lowers for CUDA
  std::string out;
};

#ifdef DRAGON_MODEL_IN_PROCESS
// The end check of --lowers-for cuda: the lowering the GPU measurers run before compiling.
model::EndCheck lowers_for_cuda() {
  return [](const ir::PrimFunc& scheduled) -> std::optional<std::string> {
    bench::CudaLowering lowering = bench::lower_for_cuda(scheduled, lower::Target::cuda_h200());
    if (lowering.failure == search::MeasureStatus::kOk) return std::nullopt;
    return std::move(lowering.why);
  };
}
#endif

}  // namespace

Command add_propose_command(CLI::App& app) {
  auto o = std::make_shared<ProposeOptions>();
  CLI::App* sub = app.add_subcommand("propose", "Sample scripts for an op spec with a trained model (not measured)");
  sub->add_option("spec", o->request.workload, "Op spec, e.g. matmul:m=128,n=128,k=128")->required();
  sub->add_option("--model", o->request.model_path, "The model's weights (model.safetensors)")->required();
  sub->add_option("--attempts", o->request.attempts, "Scripts to sample")->capture_default_str();
  sub->add_option("--refine", o->refine_file, "A script file to improve (refinement) instead of writing one");
  sub->add_option("--prompt", o->prompt,
                  "How the model reads the workload: ir or spec (default: as the model was trained, from its file)")
      ->check(CLI::IsMember({"ir", "spec"}));
  sub->add_option("--temperature", o->request.temperature, "Sampling temperature (0: greedy)")->capture_default_str();
  sub->add_option("--top-p", o->request.top_p, "Nucleus sampling mass")->capture_default_str();
  sub->add_option("--max-tokens", o->request.max_new_tokens, "Longest script in tokens (0: until the model's context is full)")->capture_default_str();
  sub->add_option("--seed", o->request.seed, "Attempt i samples with seed + i")->capture_default_str();
  sub->add_flag("--unconstrained", o->unconstrained, "Sample without the constrained decoder");
  sub->add_option("--lowers-for", o->lowers_for,
                  "With the constrained decoder, an attempt may end only where its script lowers for this target "
                  "(cuda: kernels the GPU can run); where it would end otherwise it writes on")
      ->check(CLI::IsMember({"cuda"}));
  sub->add_option("--write-on", o->request.write_on_tokens,
                  "With --lowers-for: tokens an attempt may write after its first refused end before it ends at the "
                  "next line end whatever the check says")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--device", o->request.device,
                  "cpu, cuda or auto (cuda when there is one); the CPU by default, since sampling a small model a "
                  "token at a time is bound by kernel launches on a GPU")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}))
      ->capture_default_str();
  sub->add_option("--threads", o->request.threads, "CPU threads for libtorch (0: its default)");
  sub->add_option("--out", o->out, "Also write the attempts as JSON lines to this file");
#ifdef DRAGON_MODEL_IN_PROCESS
  return [o]() {
    model::ProposeRequest request = o->request;
    request.constrained = !o->unconstrained;
    if (!o->lowers_for.empty()) {
      if (o->unconstrained) throw UserError("propose: --lowers-for needs the constrained decoder (drop --unconstrained)");
      request.end_check = lowers_for_cuda();
    }
    if (!o->prompt.empty()) request.prompt = data::parse_prompt_form(o->prompt, "propose --prompt");
    if (!o->refine_file.empty()) request.existing_script = read_text_file(o->refine_file);
    std::ofstream out;
    if (!o->out.empty()) {
      out.open(o->out);
      if (!out) throw UserError("propose: cannot write " + o->out);
    }
    model::propose(request, [&](const model::Proposal& p) {
      std::fprintf(stderr, "attempt %d: %lld tokens in %.2f s, stopped at %s\n", p.attempt + 1,
                   static_cast<long long>(p.tokens), p.seconds, p.stop.c_str());
      if (p.constraint_seconds > 0) std::fprintf(stderr, "  (%.2f s of it asking the constraint)\n", p.constraint_seconds);
      if (p.ends_refused > 0) {
        std::fprintf(stderr, "  (%lld ends refused: the script did not lower; the last: %.200s)\n",
                     static_cast<long long>(p.ends_refused), p.last_refusal.c_str());
      }
      if (out.is_open()) {
        out << proposal_line(p) << '\n';
        out.flush();
      } else {
        std::printf("# attempt %d (%s)\n%s\n", p.attempt + 1, p.stop.c_str(), p.script.c_str());
      }
    });
    if (out.is_open() && !out) throw UserError("propose: writing " + o->out + " failed");
    return 0;
  };
#else
  // The options' storage must outlive parsing, which writes into it before the command runs.
  return [o]() -> int { exec_model_binary(); };
#endif
}

}  // namespace dragon::cli
