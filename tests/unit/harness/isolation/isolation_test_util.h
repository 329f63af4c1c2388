// Shared by the isolation tests: the kernels folder, options pointing at the runner this
// build made, and argument tensors with NaN-filled outputs as the verifier prepares them.
#pragma once

#include <string>
#include <vector>

#include "dragon/harness/isolated_candidate.h"
#include "dragon/tensor/host_tensor.h"

namespace dragon::harness::testing {

std::string kernel_path(const std::string& file);
// The runner of this build, a short timeout and a compile cache of the tests' own.
IsolationOptions test_options();
// X: f32[4, 256] (values -512..511 scaled by 1/8, alternating signs) and Y: f32[4, 256] of NaN.
std::vector<tensor::HostTensor> relu_arguments();

}  // namespace dragon::harness::testing
