// Timing of an external CUDA kernel (isolated_kernel.h) in a dragon-kernel-runner child,
// with the output of every timed call checked by this process, never by the child.
//
// The parent draws K input sets from secret seeds (K = TimingRequest::distributions.size(),
// at least 2) and pre-fills their outputs with the NaN sentinel, and makes siblings of each
// (input_siblings.h: the set with one or four elements of one input changed). The sets and
// their siblings are the V variants of the rotation. The child gets the sets and the
// siblings' changed elements, and nothing else (no seed, no reference). It times the kernel
// with the harness's GPU timer (gpu_timer.h: events, a device-wide synchronize inside each
// window, the L2 flushed, warm-up apart, repetitions until the 95% CI is within 1% or a
// cap). Call i runs variant i % V on one of K + 1 buffer groups (call i % (K + 1)),
// reloaded before the call, outside its window, from a pristine device copy of the
// variant's set and patched: inputs restored and outputs back to the sentinel. Every group
// buffer sits in a red zone (red_zones.h: NaN guards in even groups, page ends in odd
// ones). After each call, outside the window, the child copies the call's outputs into a
// slot of its own in the shared region, and after the last call it reads the red zones
// back. Afterwards the parent compares every call's outputs with the reference of that
// call's variant, under the calibrated tolerance of verify.h, and applies the physics
// floor (physics_floor.h) to every call.
//
// Why a kernel cannot be right on the checked calls and skip work on the others: every
// timed call is checked, in full. Skipping work leaves the sentinel (outputs are reset
// before every call, so the previous call's result is never there to reuse); a result
// cached under a buffer's address is the wrong variant's (a group never holds the same
// variant on two consecutive uses); a result cached under a sample of the inputs is the
// wrong one for the sibling that shares the sample; a result cached under the whole
// contents is correct but costs no more than copying the outputs, which is faster than
// physics allows whenever skipping the work would pay, and no single call may beat the
// floor.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/harness/candidate.h"
#include "dragon/harness/gpu_timer.h"
#include "dragon/harness/input_siblings.h"
#include "dragon/harness/isolated_candidate.h"
#include "dragon/harness/isolated_kernel.h"
#include "dragon/harness/physics_floor.h"
#include "dragon/harness/reference.h"
#include "dragon/interp/input_generator.h"
#include "dragon/ir/function.h"

namespace dragon::harness {

struct TimingRequest {
  // One input set per entry, rotated across the timed calls; at least two.
  std::vector<interp::Distribution> distributions = {interp::Distribution::kNormal, interp::Distribution::kUniform,
                                                     interp::Distribution::kOffset};
  // Siblings of each set in the rotation (input_siblings.h), after the sets themselves:
  // a cache keyed on a sample of the inputs returns a set's result for its sibling.
  int siblings_per_set = 2;
  // Red zones around the device buffers the calls run on: guards, and in every other
  // buffer group page ends instead (an overrun faults) unless page_end_groups is off.
  bool red_zones = true;
  bool page_end_groups = true;
  // nullopt: a secret seed (secret_seed()), reported in the result. A value: reproducible sets.
  std::optional<uint64_t> seed;
  // The timer's settings. max_calls is lowered to what recorded_output_budget_bytes holds.
  GpuTimerOptions timer;
  // Shared memory for every timed call's own copy of its outputs; timing is refused when it
  // cannot hold timer.min_calls calls.
  uint64_t recorded_output_budget_bytes = uint64_t{1} << 30;
  DevicePeaks peaks = DevicePeaks::h200_spec_sheet();
  ReferenceOptions reference;  // how the reference outputs of the K sets are computed
  // The runner, the compile cache and NVRTC's options; its `timeout` (one verification
  // run) is not used: the timing run has its own.
  IsolationOptions isolation;
  // The whole timing run: context creation, uploads, warm-up, the measuring phase (the
  // timer's max_seconds) and the copies of every call's outputs.
  std::chrono::milliseconds timeout{60000};
};

enum class TimingOutcome {
  kOk,                 // every call's outputs correct, no call faster than physics
  kWrongOutput,        // some timed call's outputs fail the check (first_wrong_call)
  kImpossiblyFast,     // outputs correct, but calls took less than the physics floor
  kRunFailed,          // the kernel did not compile, failed, crashed, hung or left no handshake
  kOutOfBoundsWrite,   // some call wrote into the red zone around a buffer
};
std::string_view timing_outcome_name(TimingOutcome outcome);  // "ok", "wrong output", ...
std::string_view timing_outcome_id(TimingOutcome outcome);    // "ok", "wrong_output", ... (JSON)

// The input sets of a timing and their siblings: the rotation's variants, drawn from one
// seed (secret unless given), outputs pre-filled with the sentinel, and their references
// once computed. Drawn by the timing itself, or once for many timings (reward.h's
// screening pool), whose references then exist while kernels run (in this process, which
// hides its memory from them: isolated_candidate.h).
struct TimingInputs {
  uint64_t seed = 0;
  std::vector<std::vector<tensor::HostTensor>> sets;  // K base sets, every parameter
  std::vector<size_t> variant_bases;                  // per variant: its base set (the first K are the sets)
  std::vector<InputSibling> siblings;                 // per variant past the first K: its changes
  std::vector<std::string> labels;                    // per variant
  std::vector<std::vector<ReferenceOutput>> references;  // per variant; empty until computed
};
// Draws the sets and siblings of `request` (distributions, siblings_per_set, seed).
TimingInputs draw_timing_inputs(const ir::PrimFunc& func, const TimingRequest& request);
// Computes the reference outputs of every variant (once; a no-op when they are there).
void compute_timing_references(TimingInputs& inputs, const Reference& reference);

// The check of one timed call's outputs.
struct CallCheck {
  int call = 0;
  int variant = 0;  // which variant of the rotation it ran (IsolatedTiming::variants)
  bool ok = false;
  double normalized_error = 0;  // the largest over the outputs
  std::string problem;          // "" when ok; else the failing outputs' comparisons
};

struct IsolatedTiming {
  TimingOutcome outcome = TimingOutcome::kRunFailed;
  std::string reason;  // "" when ok
  RunOutcome run;      // how the runner ended
  uint64_t seed = 0;
  std::vector<std::string> input_sets;  // their distributions, in rotation order
  std::vector<std::string> variants;    // the rotation: the sets, then their siblings
  int call_limit = 0;                   // the timer's max_calls after the budget
  GpuTiming timing;                     // from the child's samples; empty unless the run succeeded
  GpuState gpu_state;                   // read by the child after the last call
  PhysicsFloor floor;
  std::string peaks_source;             // where the floor's peak rates come from
  std::vector<CallCheck> calls;         // one per timed call, in call order
  int first_wrong_call = -1;
  int calls_below_floor = 0;
  std::string red_zone_violations;      // kOutOfBoundsWrite: which guard bytes changed

  bool ok() const { return outcome == TimingOutcome::kOk; }
  // "OK 0.412 ms median (...)" or "REJECTED (wrong output): ...", then the GPU and the floor.
  std::string describe() const;
};

// Times `kernel` (CUDA only) against the unscheduled `reference`. Throws UserError for a
// request that cannot be honoured (a CPU kernel, fewer than two input sets, timer settings
// out of range, a budget that cannot hold timer.min_calls calls, a reference that the
// interpreter cannot run) and RuntimeError for the harness's own failures (no runner, no
// memory for the region). What the kernel does is in the result, never an exception.
IsolatedTiming time_isolated_kernel(const IsolatedKernel& kernel, const ir::PrimFunc& reference,
                                    const TimingRequest& request = {});
// With a reference built once and, optionally, inputs drawn once (whose references are
// computed on first use); `inputs` must have been drawn for `request`'s distributions.
IsolatedTiming time_isolated_kernel(const IsolatedKernel& kernel, const Reference& reference,
                                    const TimingRequest& request, TimingInputs* inputs = nullptr);

}  // namespace dragon::harness
