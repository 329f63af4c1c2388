// The runner's main loop (kernel_runner.h): read the job, map the arguments, run, reply.
#include "dragon/harness/kernel_runner.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "runner_confinement.h"
#include "runner_jobs.h"

namespace dragon::harness::kernel_runner {
namespace {

bool read_all(int fd, std::string& out) {
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      return false;
    }
  }
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      return false;
    }
  }
  return true;
}

Reply failed(const Job& job, const char* api, std::string message) {
  return failure_reply(job, RuntimeFailure{api, std::move(message), "", "kernel_runner.cc"});
}

// Maps the argument region shared with the parent and closes its descriptor, so that the
// kernel holds nothing of the parent's but this mapping. A CPU run with page-end red zones
// maps each zone on its own, with an inaccessible page before and after it: the first
// access past a tensor's end (or before its zone) faults. Everything else maps the region
// whole (CUDA runs copy the zones to the device).
Reply map_arguments(const Job& job, MappedArguments& mapped) {
  struct stat st {};
  if (::fstat(kArgumentsFd, &st) != 0)
    return failed(job, "fstat", std::string("no argument region: ") + std::strerror(errno));
  if (static_cast<uint64_t>(st.st_size) != job.region_bytes) {
    return failed(job, "fstat",
                  "the argument region holds " + std::to_string(st.st_size) + " bytes, the job says " +
                      std::to_string(job.region_bytes));
  }
  const bool gapped = job.kind == JobKind::kRunCpu && job.red_zones == RedZones::kPageEnd;
  if (gapped) {
    const uint64_t page = host_page_bytes();
    uint64_t span = page;
    for (const ArgumentSlice& zone : job.zones) span += zone.bytes + page;
    void* reserved = ::mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED) {
      return failed(job, "mmap", std::string("cannot reserve the red zones: ") + std::strerror(errno));
    }
    auto* cursor = static_cast<unsigned char*>(reserved) + page;
    for (size_t i = 0; i < job.zones.size(); ++i) {
      const ArgumentSlice& zone = job.zones[i];
      void* p = ::mmap(cursor, zone.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, kArgumentsFd,
                       static_cast<off_t>(zone.offset));
      if (p == MAP_FAILED) return failed(job, "mmap", std::string("cannot map a red zone: ") + std::strerror(errno));
      mapped.arguments.push_back(cursor + (job.arguments[i].offset - zone.offset));
      cursor += zone.bytes + page;
    }
  } else if (job.region_bytes > 0) {
    void* p = ::mmap(nullptr, job.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, kArgumentsFd, 0);
    if (p == MAP_FAILED) return failed(job, "mmap", std::string("cannot map the arguments: ") + std::strerror(errno));
    mapped.region = static_cast<unsigned char*>(p);
    for (const ArgumentSlice& a : job.arguments) mapped.arguments.push_back(mapped.region + a.offset);
  } else {
    mapped.arguments.assign(job.arguments.size(), nullptr);
  }
  ::close(kArgumentsFd);
  return success_reply(job);
}

Reply carry_out(const Job& job) {
  // Before any untrusted code runs: a compile job loads the result, and so runs its
  // static constructors.
  if (Status confined = confine_runner(); !confined) return failure_reply(job, confined.error());
  if (job.kind == JobKind::kCompileCpu) return compile_cpu_job(job);
  MappedArguments mapped;
  if (Reply reply = map_arguments(job, mapped); reply.status != ReplyStatus::kSuccess) return reply;
  switch (job.kind) {
    case JobKind::kRunCpu: return run_cpu_job(job, mapped.arguments);
    case JobKind::kRunCuda: return run_cuda_job(job, mapped.region);
    case JobKind::kTimeCuda: return time_cuda_job(job, mapped.region);
    case JobKind::kCompileCpu: break;
  }
  return failed(job, "job", "a job of an unknown kind");
}

}  // namespace

int runner_main(int argc, char** argv) {
  struct stat st {};
  if (argc != 1 || ::fstat(kControlFd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    std::fprintf(stderr, "%s: started by the harness only (src/harness/isolation); it takes no arguments\n",
                 argc > 0 ? argv[0] : "dragon-kernel-runner");
    return 2;
  }
  std::string bytes;
  if (!read_all(kControlFd, bytes)) {
    std::fprintf(stderr, "dragon-kernel-runner: cannot read the job: %s\n", std::strerror(errno));
    return 2;
  }
  std::optional<Job> job = decode_job(bytes);
  if (!job) {
    std::fprintf(stderr, "dragon-kernel-runner: malformed job (%zu bytes)\n", bytes.size());
    return 2;
  }
  bytes.clear();
  Reply reply = carry_out(*job);
  // Whatever the kernel printed reaches the parent before the handshake does.
  std::fflush(stdout);
  std::fflush(stderr);
  if (!write_all(kControlFd, encode_reply(reply))) return 1;
  ::close(kControlFd);
  return reply.status == ReplyStatus::kSuccess ? 0 : 1;
}

}  // namespace dragon::harness::kernel_runner
