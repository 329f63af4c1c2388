// Our own compiled kernels as the harness's candidates, run in this process: a CPU
// Executable (runtime/build.h) as it is, and a CUDA function (runtime/cuda_function.h) on
// device buffers in red zones (red_zones.h); and the timing of a CUDA function with the
// rotation, siblings, red zones and every-call checks of isolated timing. What a search
// measures its candidates with (reward.h). Kernels we did not write run isolated instead
// (isolated_candidate.h, isolated_timing.h).
//
// A device fault in this process leaves its CUDA context unusable for every later kernel,
// so page-end red zones, which turn an overrun into a fault, are off by default here:
// guards still poison reads past an end with NaN and catch writes there.
#pragma once

#include <memory>
#include <string>

#include "dragon/harness/candidate.h"
#include "dragon/harness/isolated_timing.h"
#include "dragon/harness/red_zones.h"
#include "dragon/harness/reference.h"
#include "dragon/runtime/build.h"
#include "dragon/runtime/cuda_function.h"

namespace dragon::harness {

// A CPU (or CUDA) Executable run on the verifier's tensors as they are.
std::unique_ptr<Candidate> make_executable_candidate(std::shared_ptr<const runtime::Executable> executable,
                                                     std::string name);

struct DeviceRunOptions {
  bool red_zones = true;         // guard bytes around every buffer, checked after the run
  bool fault_on_overrun = false;  // every other run, page ends instead of guards (see above)
};

// A loaded CUDA function: per run every argument copied to a device zone of its own, the
// function launched, the device synchronised, every zone copied back and its guards
// checked (a write there is kWroteOutOfBounds). A device fault is kCrashed.
std::unique_ptr<Candidate> make_cuda_function_candidate(std::shared_ptr<const runtime::LoadedCudaFunction> function,
                                                        std::string name, DeviceRunOptions options = {});

// Times a loaded CUDA function in this process as time_isolated_kernel times a kernel file:
// the same rotation of sets and siblings over buffer groups in red zones (page-end groups
// only with request.page_end_groups, see above), every call's outputs checked against its
// variant's reference, the physics floor. `inputs` as time_isolated_kernel takes them.
IsolatedTiming time_cuda_function(std::shared_ptr<const runtime::LoadedCudaFunction> function, const Reference& reference,
                                  const TimingRequest& request, TimingInputs* inputs = nullptr);

}  // namespace dragon::harness
