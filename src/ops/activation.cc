// Operator family "activation" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_activation_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
