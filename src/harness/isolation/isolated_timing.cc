// time_isolated_kernel (isolated_timing.h): a TimingRun (timing_run.h) whose job a
// dragon-kernel-runner child carries out, the kernel compiled first. The child sees the
// region and the job; everything it reports is checked here after it has exited.
#include "dragon/harness/isolated_timing.h"

#include <fmt/format.h>

#include "child_process.h"
#include "child_verdict.h"
#include "dragon/support/error.h"
#include "runner_environment.h"
#include "timing_run.h"

namespace dragon::harness {
namespace {

using kernel_runner::Job;
using kernel_runner::JobKind;

void check_language(const IsolatedKernel& kernel) {
  if (kernel.language != KernelLanguage::kCuda) {
    throw UserError(fmt::format("timing {}: only CUDA kernels are timed (a GPU timer with CUDA events); {} is a CPU "
                                "kernel, and CPU timing is not offered",
                                kernel.source_name, kernel.source_name));
  }
}

// The runner child: compile, hand it the job and the region, judge how it ended.
isolation::TimingExecution run_in_child(const IsolatedKernel& kernel, const TimingRequest& request, Job& job,
                                        isolation::SharedArguments& region) {
  isolation::TimingExecution execution;
  Expected<CompiledKernel> compiled = compile_isolated_kernel(kernel, request.isolation);
  if (!compiled) {
    execution.outcome = RunOutcome::failure(RunStatus::kFailed,
                                            "compiling " + kernel.source_name + ": " + compiled.error().describe());
    return execution;
  }
  job.entry = compiled.value().entry;
  job.cubin = compiled.value().cubin;
  job.grid = compiled.value().grid;
  job.block = compiled.value().block;
  job.dynamic_shared_bytes = compiled.value().dynamic_shared_bytes;
  isolation::ChildRequest child_request{find_kernel_runner(request.isolation).value(),
                                        kernel_runner::encode_job(job),
                                        region.fd(),
                                        isolation::runner_environment(JobKind::kTimeCuda),
                                        request.timeout,
                                        request.isolation.output_limit,
                                        request.isolation.hide_parent_memory};
  isolation::ChildRun child = isolation::run_child(child_request).value();
  execution.outcome = isolation::judge_child(child, job.nonce, request.timeout);
  if (!execution.outcome.ok()) return execution;
  kernel_runner::Reply reply = *kernel_runner::decode_reply(child.reply);  // judge_child found it well-formed
  execution.samples_ms = std::move(reply.samples_ms);
  execution.gpu_state = reply.gpu_state;
  execution.red_zone_violations = std::move(reply.red_zone_violations);
  return execution;
}

}  // namespace

IsolatedTiming time_isolated_kernel(const IsolatedKernel& kernel, const Reference& reference,
                                    const TimingRequest& request, TimingInputs* inputs) {
  check_language(kernel);
  isolation::check_timing_request(request, kernel.source_name);
  isolation::TimingRun run(reference, request, inputs, kernel.source_name);
  return run.run([&](Job& job, isolation::SharedArguments& region) {
    return run_in_child(kernel, request, job, region);
  });
}

IsolatedTiming time_isolated_kernel(const IsolatedKernel& kernel, const ir::PrimFunc& reference,
                                    const TimingRequest& request) {
  check_language(kernel);
  isolation::check_timing_request(request, kernel.source_name);
  return time_isolated_kernel(kernel, Reference(reference, request.reference), request, nullptr);
}

}  // namespace dragon::harness
