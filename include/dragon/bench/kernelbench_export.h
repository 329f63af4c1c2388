// `dragon export kernelbench`: a KernelBench-format Python file (class ModelNew) running
// the best verified kernel of a suite problem from a tuning database. The kernel's CUDA
// source (runtime::generate, the same lower -> codegen chain every build takes) is loaded
// through torch.utils.cpp_extension.load_inline and launched, kernel by kernel, with the
// grid, block, dynamic shared memory and workspaces the codegen computed, on torch's
// current stream. ModelNew creates the layers KernelBench's Model creates
// (kernelbench_module.h), in the same order, so seeded construction gives both the same
// weights. Also a KernelBench-format reference (class Model, get_inputs,
// get_init_inputs) written from the op spec, for checking where KernelBench's own problem
// files are absent (scripts/kernelbench_check.py). Writes text only: no GPU, no torch.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "dragon/bench/kernelbench_module.h"
#include "dragon/codegen/cuda_codegen.h"
#include "dragon/ir/function.h"
#include "dragon/suites/suite.h"

namespace dragon::bench {

// Everything the files are written from.
struct KernelBenchKernel {
  suites::Problem problem;
  std::string spec;               // canonical op spec
  ir::PrimFunc func;              // the op's function: parameter names, roles, dtypes and shapes
  codegen::CudaSource source;     // what the codegen printed for the scheduled function
  KernelBenchModule module;       // the Model's layers and forward
  std::string provenance;         // one line: which record, measured where, how fast
};

// The KernelBench ModelNew file. Throws UserError, naming the problem, for a kernel the
// format cannot express: several outputs, an in-place (inout) parameter, a dtype torch
// has no type for, a layer binding a parameter the function lacks.
std::string write_kernelbench_model_new(const KernelBenchKernel& kernel);

// The KernelBench-format reference of the problem: class Model (the same layers, the
// forward of the table), get_inputs (torch.rand per forward input, as KernelBench draws
// them) and get_init_inputs (empty: the layers' shapes come from the spec).
std::string write_kernelbench_reference(const KernelBenchKernel& kernel);

struct KernelBenchExportOptions {
  std::string db;                          // the tuning database (required)
  std::string suite = "kernelbench-l1";
  std::string suites_dir;                  // empty: suites::default_suites_dir()
};

// The best verified CUDA record of `problem` (its id, "19", or its name, "19_ReLU") in the
// database, over every machine it was tuned on, scheduled (its script replayed, or the
// default schedule when the default was the best) and generated. Throws UserError for
// an unknown problem, one the suite cannot express, an op kind the module table lacks, a
// database without a verified CUDA record of it (saying how many records it has), or a
// schedule that no longer lowers.
KernelBenchKernel best_kernelbench_kernel(std::string_view problem, const KernelBenchExportOptions& options);

}  // namespace dragon::bench
