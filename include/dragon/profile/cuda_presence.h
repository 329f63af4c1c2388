// Whether this machine can run CUDA programs at all, asked of the driver through dlopen
// (so nothing here links CUDA).
#pragma once

#include <optional>
#include <string>

namespace dragon::profile {

// nullopt when a CUDA driver is loadable and sees at least one GPU; else the reason.
std::optional<std::string> why_no_cuda_gpu();

}  // namespace dragon::profile
