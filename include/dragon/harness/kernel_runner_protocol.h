// What the harness and dragon-kernel-runner (its child process) say to each other: the
// job the parent sends over the control socket, the reply (the success handshake) the
// child sends back, and where each argument tensor lies in the shared argument region.
// Not the process handling (src/harness/isolation/child_process.h) and not the runner.
//
// The timing job (kTimeCuda) lays out more than one run's tensors: its region holds K input
// sets and one slot per timed call for the outputs that call wrote, which the PARENT checks
// after the job (isolated_timing.h). The child checks nothing and never sees a reference.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/harness/gpu_timer.h"
#include "dragon/harness/red_zones.h"
#include "dragon/support/expected.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::harness::kernel_runner {

// File descriptors the runner finds open when it starts (0, 1, 2 are /dev/null and the
// captured output). Nothing else is passed: no arguments, no environment beyond the few
// variables the CUDA driver and the compiler need (isolated_candidate.h).
inline constexpr int kControlFd = 3;    // a stream socket: job in, reply out
inline constexpr int kArgumentsFd = 4;  // the memfd with the argument tensors (runs only)

// Every tensor starts at a multiple of this in the region (what cudaMalloc guarantees, so
// vectorised loads in a kernel behave as they would on device buffers).
inline constexpr uint64_t kArgumentAlignment = 256;

struct ArgumentSlice {
  uint64_t offset = 0;
  uint64_t bytes = 0;
  friend bool operator==(const ArgumentSlice&, const ArgumentSlice&) = default;
};

// The region holds the tensors, each in its zone (red_zones.h), and nothing else. Without
// red zones a zone is its tensor rounded up to kArgumentAlignment; with guards it adds
// kGuardBytes before and after; with page ends it is the whole host pages the tensor ends
// in, the tensor at their end (the runner maps no page between two zones).
struct ArgumentLayout {
  std::vector<ArgumentSlice> slices;  // one per argument, in parameter order: the tensor
  std::vector<ArgumentSlice> zones;   // one per argument: its zone, holding the tensor
  RedZones red_zones = RedZones::kNone;
  uint64_t total_bytes = 0;
  std::vector<RedZone> red_zone_list() const;  // slices and zones paired, for red_zones.h
};
ArgumentLayout layout_arguments(const std::vector<tensor::HostTensor>& args, RedZones red_zones = RedZones::kNone);
// The same for slices of the given sizes, in order.
ArgumentLayout layout_slices(const std::vector<uint64_t>& bytes, RedZones red_zones = RedZones::kNone);

enum class JobKind : uint32_t {
  kCompileCpu = 1,  // compile `source` into the compile cache, check `entry`, reply with the path
  kRunCpu = 2,      // dlopen `module_path`, call `entry` on the region's tensors
  kRunCuda = 3,     // load `cubin`, copy the tensors in, launch `entry`, synchronise, copy all back
  kTimeCuda = 4,    // load `cubin`, time `entry` with time_gpu over rotated input sets, record every call's outputs
};

// kTimeCuda: bytes written over one variant's copy of its base set after the copy
// (a sibling's changed elements, input_siblings.h).
struct ElementPatch {
  uint64_t variant = 0;
  uint64_t param = 0;
  uint64_t byte_offset = 0;  // inside the parameter's tensor
  uint32_t bytes = 0;        // 1, 2, 4 or 8: one element
  uint64_t bits = 0;         // its new value, little-endian in the low `bytes` bytes
  friend bool operator==(const ElementPatch&, const ElementPatch&) = default;
};

struct Job {
  JobKind kind = JobKind::kRunCpu;
  uint64_t nonce = 0;  // echoed by the reply: a reply from an earlier or forged run does not count
  std::string entry;
  // kCompileCpu
  std::string source;
  std::string cache_directory;
  std::string compiler;
  std::string optimization;
  bool march_native = false;
  // kRunCpu
  std::string module_path;
  // kRunCuda
  std::string cubin;
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  int64_t dynamic_shared_bytes = 0;
  // runs. kTimeCuda: `input_sets` x P slices, set-major (set s, parameter p at s * P + p).
  std::vector<ArgumentSlice> arguments;
  uint64_t region_bytes = 0;
  // Runs: how the arguments' zones are placed, and the zones (one per argument, or none for
  // kNone). kTimeCuda: red zones around the device buffers the calls run on, none (kNone),
  // guards (kGuards), or guards in even buffer groups and page ends in odd ones (kPageEnd).
  RedZones red_zones = RedZones::kNone;
  std::vector<ArgumentSlice> zones;
  // kTimeCuda (with the kRunCuda fields above)
  uint64_t input_sets = 0;               // K >= 1 pristine sets
  // The rotation's V variants (timed_variant): variant v starts as a copy of set
  // variant_bases[v], then gets the patches naming it. V >= 2 and V does not divide K + 1.
  std::vector<uint64_t> variant_bases;
  std::vector<ElementPatch> patches;
  std::vector<uint64_t> recorded_params;  // parameters whose contents are recorded after each timed call
  // timer.max_calls x recorded_params.size() slices, call-major: where timed call c's copy of
  // recorded parameter r goes (c * recorded_params.size() + r).
  std::vector<ArgumentSlice> call_slots;
  GpuTimerOptions timer;
};

// kTimeCuda's rotation. The child keeps K pristine input sets on the device and K + 1
// buffer groups the kernel is launched on (plus one for the warm-up calls, on set 0).
// Before each timed call, outside the timed window, the call's group is reloaded from the
// pristine copy of its variant's set and patched: inputs restored and outputs back to the
// parent's pre-fill, so a call that skips work leaves the pre-fill, never an earlier
// call's result. Call i runs variant i % V in group i % (K + 1): consecutive uses of a
// group (i and i + K + 1) always hold different variants, so a result cached under a
// buffer's address is the wrong variant's; and a variant that is a sibling of a set shares
// all but a few elements with it, so a result cached under a sample of the inputs is the
// wrong one too.
inline uint64_t timed_variant(uint64_t call, uint64_t variants) { return call % variants; }
inline uint64_t timed_buffer_group(uint64_t call, uint64_t input_sets) { return call % (input_sets + 1); }

// Why a job's fields do not fit together ("" when they do). Runs: one zone per argument (or
// none without red zones), each inside the region and holding its argument, page-aligned
// for page ends. kTimeCuda: sets of equally sized tensors, variants and patches that fit
// them, recorded parameters among them, one slot per call and recorded parameter of that
// parameter's size, no two slices overlapping, timer settings the timer can honour.
std::string job_problem(const Job& job);

enum class ReplyStatus : uint32_t {
  kSuccess = 1,  // the kernel returned (CUDA: the device synchronised and every tensor came back)
  kFailed = 2,   // the kernel could not be loaded or launched, or the compiler rejected it
  kFaulted = 3,  // the device reported a fault of the kernel (illegal address, trap, ...)
};

struct Reply {
  uint64_t nonce = 0;
  ReplyStatus status = ReplyStatus::kFailed;
  RuntimeFailure failure;  // unless kSuccess: the call that failed in the runner, and the compiler's log
  std::string module_path;          // kCompileCpu: the shared object in the compile cache
  // kTimeCuda, on success: milliseconds of each timed call in call order (call c's outputs
  // are in call slot c), and the GPU's clocks and temperature read after the last call.
  std::vector<double> samples_ms;
  GpuState gpu_state;
  // kTimeCuda: the red zones of the buffer groups that changed ("" when none did); the
  // runner reads them back after the last call (red_zone_violations).
  std::string red_zone_violations;
};

std::string encode_job(const Job& job);
// std::nullopt for bytes that are not exactly one well-formed job.
std::optional<Job> decode_job(std::string_view bytes);
std::string encode_reply(const Reply& reply);
std::optional<Reply> decode_reply(std::string_view bytes);

}  // namespace dragon::harness::kernel_runner
