// Operator family "pool" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_pool_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
