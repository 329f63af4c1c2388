// Operator family "recsys" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_recsys_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
