// Operator family "loss" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_loss_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
