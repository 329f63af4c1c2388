// Operator family "norm" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_norm_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
