// Read and write regions of a block, derived from the buffer accesses in its body and
// init, in terms of the block's own iteration variables (what BlockNode::reads/writes hold).
#pragma once

#include <vector>

#include "dragon/ir/stmt.h"

namespace dragon::ir {

struct BlockAccessRegions {
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
};

// Accesses of one buffer at the same indices merge into one point region; accesses
// whose indices differ by constants merge into a covering range; anything else (data-
// dependent indices, loads inside nested loops) covers the whole dimension. Buffers
// in `alloc_buffers` of the block are excluded. When `init` is defined (a reduction), reads
// of an output at exactly the written indices are the update's own and are left out, as
// in TensorIR; other self-reads (scans) stay. Order: first access first.
BlockAccessRegions detect_block_access_regions(const Stmt& body, const Stmt& init,
                                               const std::vector<Buffer>& alloc_buffers = {});

}  // namespace dragon::ir
