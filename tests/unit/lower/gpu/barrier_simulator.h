// A test-only executable model of the CUDA kernel form: each kernel's threads run one
// after another between barriers (every thread runs up to a sync_threads(), then the next
// phase starts), shared memory shared by the block, per-thread memory private. A kernel
// missing a barrier reads data another thread has not written yet and computes something
// else, which the interpreter then shows. Not the lowering: a way to run its output.
#pragma once

#include "dragon/ir/function.h"

namespace dragon::lower::testing {

// The kernel-form function rewritten so the sequential interpreter runs it with the
// barrier semantics above. `drop_barriers` removes every sync_threads() first (to show
// that the model notices a missing one).
ir::PrimFunc serialize_between_barriers(const ir::PrimFunc& func, bool drop_barriers = false);

}  // namespace dragon::lower::testing
