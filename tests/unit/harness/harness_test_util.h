// Shared helpers of the verification tests: honest candidates (the interpreter, the CPU
// backend's compiled unscheduled function) and small op instances from the registry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dragon/harness/candidate.h"
#include "dragon/ir/function.h"
#include "dragon/runtime/build.h"

namespace dragon::harness::testing {

// The unscheduled function of an op spec ("matmul:m=8,n=8,k=8").
ir::PrimFunc op_function(const std::string& spec);

// Runs `func` with the interpreter: the reference's own computation, as a candidate.
std::unique_ptr<Candidate> interpreter_candidate(const ir::PrimFunc& func, std::string name = "interpreter");

// The CPU backend's build of `func`, as a candidate; the executable must outlive it.
std::unique_ptr<Candidate> executable_candidate(const runtime::Executable& executable, std::string name);

// A compile cache under the build directory (not ~/.cache).
runtime::CompileCache& test_cache();

}  // namespace dragon::harness::testing
