// A test-only model of cp.async on the kernel form, to run before
// serialize_between_barriers: a store under a loop annotated async_copy goes into a
// per-thread queue tagged with its group (the thread's count of async_commit_group so
// far) and lands in shared memory only at the first async_wait_group(n) that leaves at
// most n newer committed groups in flight, as on the GPU. A read that no wait covers then
// sees the old contents, and the interpreter's outputs show it. Not the lowering.
#pragma once

#include "dragon/ir/function.h"

namespace dragon::lower::testing {

// The kernel-form function with its async copies delayed as above. Each thread may have
// at most `queue_groups` groups in flight (the queue has that many slots per buffer).
ir::PrimFunc delay_async_copies(const ir::PrimFunc& func, int64_t queue_groups = 16);

}  // namespace dragon::lower::testing
