// Operator family "fused" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_fused_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
