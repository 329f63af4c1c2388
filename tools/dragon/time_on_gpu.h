// `dragon run --target cuda --time`: the scheduled function's kernels timed on the GPU by
// the harness's timer (events, device-wide synchronize, L2 flushed, CI stopping rule) on
// device-resident copies of the run's inputs. No copies are inside the timed windows.
#pragma once

#include <vector>

#include "dragon/harness/gpu_timer.h"
#include "dragon/ir/function.h"
#include "dragon/lower/target.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::cli {

// `scheduled` compiled for `target` (a CUDA one). Throws UserError when there is no GPU or
// building or a launch fails.
harness::GpuTiming time_on_gpu(const ir::PrimFunc& scheduled, const lower::Target& target,
                               const std::vector<tensor::HostTensor>& args);

}  // namespace dragon::cli
