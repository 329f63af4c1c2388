#include "model_attempts.h"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "dragon/schedule/schedule.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/trace.h"
#include "dragon/script/script.h"
#include "dragon/support/error.h"
#include "dragon/support/file.h"
#include "dragon/support/subprocess.h"
#include "model_binary.h"
#include "proposal_lines.h"

namespace dragon::cli {

namespace fs = std::filesystem;

std::string default_model_path() {
  if (const char* env = std::getenv("DRAGON_MODEL"); env != nullptr && *env != '\0') return env;
  return (fs::path(DRAGON_SOURCE_DIR) / "data" / "model" / "model.safetensors").string();
}

void add_sampling_flags(CLI::App* sub, ModelQuestion& q) {
  sub->add_option("--attempts", q.attempts, "Scripts to ask for")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--temperature", q.temperature, "Sampling temperature (0: greedy)")->capture_default_str();
  sub->add_option("--top-p", q.top_p, "Nucleus sampling mass")->capture_default_str();
  sub->add_option("--seed", q.seed, "Attempt i samples with seed + i")->capture_default_str();
  sub->add_flag("--unconstrained", q.unconstrained, "Sample without the constrained decoder");
  sub->add_flag("--free-ends", q.free_ends,
                "Let an attempt for CUDA end at any line of a valid script; by default it ends only where its script "
                "lowers for CUDA (writing on where it would stop at a kernel the GPU cannot run)");
  sub->add_option("--prompt", q.prompt,
                  "How the model reads the workload: ir or spec (default: as the model was trained, from its file)")
      ->check(CLI::IsMember({"ir", "spec"}));
  sub->add_option("--threads", q.threads, "CPU threads for the model (0: libtorch's default)");
}

std::vector<model::Proposal> ask_model(const ModelQuestion& q) {
  char pattern[] = "/tmp/dragon-model-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) throw UserError("cannot make a temporary folder in /tmp for the model's answers");
  const fs::path folder(pattern);
  const std::string out = (folder / "proposals.jsonl").string();
  std::vector<std::string> argv = {model_binary_path(), "propose", q.spec, "--model", q.model_path,
                                   "--attempts", std::to_string(q.attempts), "--temperature", fmt::format("{}", q.temperature),
                                   "--top-p", fmt::format("{}", q.top_p), "--seed", std::to_string(q.seed),
                                   "--out", out};
  if (!q.prompt.empty()) argv.insert(argv.end(), {"--prompt", q.prompt});
  if (q.refine_script) {
    const std::string refine_file = (folder / "refine.script").string();
    write_text_file(refine_file, *q.refine_script);
    argv.insert(argv.end(), {"--refine", refine_file});
  }
  if (q.unconstrained) argv.push_back("--unconstrained");
  if (q.target == "cuda" && !q.unconstrained && !q.free_ends) argv.insert(argv.end(), {"--lowers-for", "cuda"});
  if (q.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(q.threads)});
  const ProcessResult run = run_process(argv, {});
  std::vector<model::Proposal> proposals;
  if (run.started && run.exit_code == 0) proposals = read_proposal_lines(out);
  std::error_code ignored;
  fs::remove_all(folder, ignored);
  if (!run.started) throw UserError("cannot start dragon-model: " + run.start_error);
  if (run.exit_code != 0) {
    throw UserError(run.signal != 0 ? fmt::format("dragon-model died of signal {} (asked about {})", run.signal, q.spec)
                                    : fmt::format("dragon-model failed (exit {}; asked about {})", run.exit_code, q.spec));
  }
  return proposals;
}

Attempt prepare_attempt(const model::Proposal& proposal, const ir::PrimFunc& func) {
  Attempt a{proposal, "", std::nullopt, std::nullopt};
  schedule::Trace trace;
  try {
    trace = script::decode(proposal.script);
  } catch (const UserError& e) {
    a.result = search::MeasureResult::failure(search::MeasureStatus::kApplyFailed,
                                              fmt::format("does not decode (stopped at {}): {}", proposal.stop, e.what()));
    return a;
  }
  a.script = script::encode(trace);
  try {
    a.scheduled = schedule::replay(trace, func).func();
  } catch (const schedule::ScheduleError& e) {
    a.result = search::MeasureResult::failure(search::MeasureStatus::kApplyFailed, e.what());
  } catch (const UserError& e) {
    a.result = search::MeasureResult::failure(search::MeasureStatus::kApplyFailed, e.what());
  }
  return a;
}

}  // namespace dragon::cli
