// Operator family "reduce" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_reduce_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
