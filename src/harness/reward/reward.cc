// RewardEvaluator (reward.h): build the candidate, verify it on the pool or a fresh draw,
// time it when it runs on the GPU, and say what happened as a typed Reward.
#include "dragon/harness/reward.h"

#include <chrono>

#include <fmt/format.h>

#include "dragon/harness/own_kernels.h"
#include "dragon/runtime/compile.h"
#include "dragon/runtime/cuda_function.h"
#include "dragon/support/error.h"

namespace dragon::harness {

RewardCandidate RewardCandidate::scheduled(ir::PrimFunc scheduled, std::string name) {
  if (name.empty()) name = scheduled->name + " (scheduled)";
  return RewardCandidate(Scheduled{std::move(scheduled)}, std::move(name));
}

RewardCandidate RewardCandidate::cpu_executable(std::shared_ptr<const runtime::Executable> executable,
                                                std::string name) {
  return RewardCandidate(std::move(executable), std::move(name));
}

RewardCandidate RewardCandidate::cuda_build(runtime::CudaBuild build, std::string name) {
  return RewardCandidate(std::make_shared<runtime::CudaBuild>(std::move(build)), std::move(name));
}

RewardCandidate RewardCandidate::external(IsolatedKernel kernel) {
  std::string name = kernel.source_name + ":" + kernel.entry;
  return RewardCandidate(std::move(kernel), std::move(name));
}

std::string_view reward_status_name(RewardStatus status) {
  switch (status) {
    case RewardStatus::kVerified: return "verified";
    case RewardStatus::kRejected: return "rejected";
    case RewardStatus::kBuildFailed: return "build failed";
  }
  return "unknown";
}

std::string Reward::to_text() const {
  std::string text(reward_status_name(status));
  if (latency) {
    text += fmt::format(": {:.4g} ms median, mean {:.4g} ms in [{:.4g}, {:.4g}] (95%, {} calls{})", latency->median_ms,
                        latency->mean_ms, latency->ci95_low_ms, latency->ci95_high_ms, latency->calls,
                        latency->converged ? "" : ", not converged");
  }
  if (!message.empty()) text += ": " + message;
  text += fmt::format(" (seed {}, {}{}, {:.3g} s)", seed, fresh_draw ? "fresh draw" : "screening pool",
                      problem_weak ? ", WEAK PROBLEM" : "", seconds);
  return text;
}

// A candidate ready to run: the verifier's Candidate, and what its timing needs.
struct RewardEvaluator::Built {
  std::unique_ptr<Candidate> candidate;
  KernelLanguage language = KernelLanguage::kCpu;
  std::shared_ptr<const runtime::LoadedCudaFunction> cuda;  // our own CUDA kernels
  std::optional<IsolatedKernel> external;                   // kernel files
};

namespace {

Reward build_failure(std::string message) {
  Reward reward;
  reward.status = RewardStatus::kBuildFailed;
  reward.message = std::move(message);
  return reward;
}

std::string first_failure(const Verdict& verdict) {
  if (verdict.failures.empty()) return "";
  const Failure& f = verdict.failures.front();
  return fmt::format("{} [{}]: {}", failure_kind_name(f.kind), f.input_set, f.message);
}

LatencyEstimate latency_of(const GpuTiming& t) {
  LatencyEstimate l;
  l.median_ms = t.median_ms;
  l.mean_ms = t.mean_ms;
  l.ci95_low_ms = t.mean_ms - t.ci95_half_width_ms;
  l.ci95_high_ms = t.mean_ms + t.ci95_half_width_ms;
  l.min_ms = t.min_ms;
  l.calls = static_cast<int>(t.samples_ms.size());
  l.converged = t.converged;
  return l;
}

}  // namespace

RewardEvaluator::RewardEvaluator(ir::PrimFunc problem, RewardOptions options)
    : problem_(std::move(problem)),
      options_(std::move(options)),
      reference_(problem_, options_.verify.reference),
      screening_(reference_, options_.verify) {}

Reward RewardEvaluator::evaluate(const RewardCandidate& candidate) { return judge(candidate, /*fresh=*/false); }

Reward RewardEvaluator::recheck(const RewardCandidate& candidate) { return judge(candidate, /*fresh=*/true); }

namespace {

// A failure to build, in the words of whoever refused.
RuntimeFailure build_refusal(const std::string& what, const std::string& why) {
  return RuntimeFailure{what, why, "", "reward.cc"};
}

}  // namespace

std::unique_ptr<Candidate> RewardEvaluator::own_cpu_candidate(std::shared_ptr<const runtime::Executable> executable,
                                                              const std::string& name) const {
  if (!options_.isolate_own_cpu_kernels) return make_executable_candidate(std::move(executable), name);
  IsolatedKernel source{KernelLanguage::kCpu, executable->source(), name + ".cc"};
  return make_isolated_candidate(std::move(source), options_.isolation);
}

Expected<RewardEvaluator::Built> RewardEvaluator::own_cuda_candidate(const runtime::CudaBuild& build,
                                                                    const std::string& name) const {
  Expected<std::unique_ptr<runtime::LoadedCudaFunction>> loaded = runtime::LoadedCudaFunction::load(build);
  if (!loaded) return loaded.error();
  Built built;
  built.language = KernelLanguage::kCuda;
  built.cuda = std::move(loaded.value());
  built.candidate = make_cuda_function_candidate(built.cuda, name);
  return built;
}

Expected<RewardEvaluator::Built> RewardEvaluator::build(const RewardCandidate& candidate) const {
  const RewardCandidate::Kernel& kernel = candidate.kernel();
  if (const auto* scheduled = std::get_if<RewardCandidate::Scheduled>(&kernel)) {
    try {
      if (!options_.target.is_gpu()) {
        Expected<std::unique_ptr<runtime::Executable>> exe =
            runtime::build(scheduled->func, options_.target, options_.build);
        if (!exe) return exe.error();
        Built built;
        built.candidate = own_cpu_candidate(std::move(exe.value()), candidate.name());
        return built;
      }
      Expected<runtime::Compiled> compiled = runtime::compile(scheduled->func, options_.target, options_.build);
      if (!compiled) return compiled.error();
      return own_cuda_candidate(compiled.value().cuda(), candidate.name());
    } catch (const UserError& e) {
      return build_refusal("lower", e.what());  // a schedule the target cannot run
    }
  }
  if (const auto* executable = std::get_if<std::shared_ptr<const runtime::Executable>>(&kernel)) {
    Built built;
    built.candidate = own_cpu_candidate(*executable, candidate.name());
    return built;
  }
  if (const auto* cuda = std::get_if<std::shared_ptr<runtime::CudaBuild>>(&kernel)) {
    return own_cuda_candidate(**cuda, candidate.name());
  }
  const IsolatedKernel& file = std::get<IsolatedKernel>(kernel);
  Expected<CompiledKernel> compiled = compile_isolated_kernel(file, options_.isolation);
  if (!compiled) return compiled.error();
  Built built;
  built.language = file.language;
  built.external = file;
  built.candidate = make_isolated_candidate(file, options_.isolation);
  return built;
}

Reward RewardEvaluator::judge(const RewardCandidate& candidate, bool fresh) {
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  Expected<Built> made = build(candidate);
  if (!made) {
    Reward reward = build_failure(made.error().describe());
    reward.fresh_draw = fresh;
    reward.seconds = seconds();
    return reward;
  }
  Built& built = made.value();

  // Verify, on the pool or a fresh secret draw.
  std::optional<PreparedInputs> drawn;
  if (fresh) {
    VerifyOptions secret = options_.verify;
    secret.seed.reset();
    drawn.emplace(reference_, secret);
  }
  const PreparedInputs& inputs = fresh ? *drawn : screening_;
  const bool on_gpu = built.language == KernelLanguage::kCuda;
  std::unique_lock<std::mutex> gpu(gpu_mutex_, std::defer_lock);
  if (on_gpu) gpu.lock();
  auto verdict = std::make_shared<const Verdict>(verify(inputs, *built.candidate));
  Reward reward;
  reward.verdict = verdict;
  reward.seed = verdict->seed;
  reward.fresh_draw = fresh;
  reward.failures = verdict->failure_kinds();
  reward.problem_weak = verdict->problem_weak();
  if (!verdict->passed) {
    reward.status = RewardStatus::kRejected;
    reward.message = first_failure(*verdict);
    reward.seconds = seconds();
    return reward;
  }

  // Time what runs on the GPU.
  if (on_gpu && options_.time) {
    TimingRequest request = options_.timing;
    TimingInputs* pool = nullptr;
    if (fresh) {
      request.seed.reset();
    } else {
      if (!timing_pool_) timing_pool_ = draw_timing_inputs(problem_, request);
      pool = &*timing_pool_;
    }
    IsolatedTiming timing;
    if (built.external) {
      timing = time_isolated_kernel(*built.external, reference_, request, pool);
    } else {
      request.page_end_groups = false;  // a fault would end this process's CUDA context (own_kernels.h)
      timing = time_cuda_function(built.cuda, reference_, request, pool);
    }
    reward.timing = std::make_shared<const IsolatedTiming>(timing);
    if (!timing.ok()) {
      reward.status = RewardStatus::kRejected;
      reward.timing_rejection = timing.outcome;
      reward.message = fmt::format("timing: {}: {}", timing_outcome_name(timing.outcome), timing.reason);
      reward.seconds = seconds();
      return reward;
    }
    reward.latency = latency_of(timing.timing);
  }
  reward.status = RewardStatus::kVerified;
  reward.seconds = seconds();
  return reward;
}

}  // namespace dragon::harness
