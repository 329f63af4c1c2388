// The CUDA emitter: one `extern "C" __global__` kernel per kernel of the flat form
// (lower.h: a SeqStmt of kernels and global workspaces), each with __launch_bounds__ and
// the launch configuration read off its thread-bound loops. Prints only: NVRTC and the
// driver are runtime/'s job.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/lower/target.h"

namespace dragon::codegen {

// What one kernel parameter is bound to at launch.
struct KernelArg {
  enum class Kind : uint8_t { kParam, kWorkspace };
  Kind kind = Kind::kParam;
  int index = 0;  // into PrimFunc params, or CudaSource::workspaces
  friend bool operator==(const KernelArg&, const KernelArg&) = default;
};

struct KernelLaunch {
  std::string name;
  std::array<int64_t, 3> grid{1, 1, 1};   // blockIdx.x, .y, .z extents
  std::array<int64_t, 3> block{1, 1, 1};  // threadIdx.x, .y, .z extents
  int64_t dynamic_shared_bytes = 0;       // every shared buffer lives in dynamic shared memory
  std::vector<KernelArg> args;
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

// A global buffer the host allocates for the whole function (an intermediate between kernels).
struct Workspace {
  std::string name;
  int64_t bytes = 0;
};

// One named piece of a CUDA prelude (the fp16/bf16 headers, the common helpers, the mma
// helpers, one wgmma helper...). A prelude is its parts in (rank, name) order; a part of a
// given name has the same text in every source, so several sources' preludes merge into
// one by the union of their parts (runtime/compile.cc, compile_cuda_batch).
struct PreludePart {
  int rank = 0;  // where the part goes: after every part of a lower rank
  std::string name;
  std::string text;
};

struct CudaSource {
  std::string code;
  // code's first prelude_size bytes are its file-scope prelude (headers, typedefs, macros,
  // helper functions); the kernels follow. Several functions' kernels may share one
  // translation unit under one prelude (runtime/compile.h, compile_cuda_batch).
  size_t prelude_size = 0;
  std::vector<PreludePart> prelude_parts;  // the prelude, in order: their texts make code's first prelude_size bytes
  std::vector<KernelLaunch> kernels;  // in launch order
  // Where each kernel's definition lies in `code`, [begin, end), in the order of `kernels`
  // (empty for a source not printed by generate_cuda): what lets a batch of functions
  // define a kernel two of them share once (runtime/compile.cc).
  std::vector<std::pair<size_t, size_t>> kernel_spans;
  std::vector<Workspace> workspaces;
};

// The order of prelude parts: by rank, then by name.
bool prelude_order(const PreludePart& a, const PreludePart& b);
// The parts' texts in prelude_order.
std::string join_prelude(std::vector<PreludePart> parts);

// Kernel k's definition in `source` with its entry name cut out: two kernels of equal keys
// are one kernel under two names (a batch defines it once, runtime/compile.cc). nullopt
// for a source without kernel_spans.
std::optional<std::string> kernel_definition_key(const CudaSource& source, size_t k);
// Hashes of the keys of `source`'s kernels, in order (none for a source without
// kernel_spans): what the GPU measurer orders a round's candidates by, so that candidates
// sharing kernels land in one program.
std::vector<size_t> kernel_definition_hashes(const CudaSource& source);

// Throws InternalError for IR that is not in the flat form, and UserError for a kernel the
// emitter cannot launch (a launch extent that is not a constant) or whose tensorized
// blocks it cannot print as warp-level code (src/codegen/cuda_tensor_intrin.cc says when;
// a kernel whose tensorized blocks have no warp-level printer stays scalar instead).
CudaSource generate_cuda(const ir::PrimFunc& flat, const lower::Target& target);

}  // namespace dragon::codegen
