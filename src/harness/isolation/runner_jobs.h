// The jobs of dragon-kernel-runner (kernel_runner_protocol.h JobKind), each turned into
// the reply it sends. Private to the runner; kernel_runner.cc does the I/O.
#pragma once

#include <vector>

#include "dragon/harness/kernel_runner_protocol.h"

namespace dragon::harness::kernel_runner {

inline Reply success_reply(const Job& job, std::string module_path = "") {
  Reply reply;
  reply.nonce = job.nonce;
  reply.status = ReplyStatus::kSuccess;
  reply.module_path = std::move(module_path);
  return reply;
}
inline Reply failure_reply(const Job& job, RuntimeFailure failure, ReplyStatus status = ReplyStatus::kFailed) {
  Reply reply;
  reply.nonce = job.nonce;
  reply.status = status;
  reply.failure = std::move(failure);
  return reply;
}

// Compiles through the runtime's CPU compile cache; loading the result here checks the
// entry symbol without ever loading untrusted code into the parent.
Reply compile_cpu_job(const Job& job);
// The argument region as the runner mapped it: the region whole (nullptr when empty or
// mapped zone by zone), and where each argument lies.
struct MappedArguments {
  unsigned char* region = nullptr;
  std::vector<unsigned char*> arguments;
};

// `arguments` points at each argument's tensor.
Reply run_cpu_job(const Job& job, const std::vector<unsigned char*>& arguments);
// `region` is the mapped argument region (nullptr when it is empty).
Reply run_cuda_job(const Job& job, unsigned char* region);
// Times the kernel over the job's rotated variants, copying each timed call's recorded
// parameters into its call slot; checks none of them (the parent does).
Reply time_cuda_job(const Job& job, unsigned char* region);

}  // namespace dragon::harness::kernel_runner
