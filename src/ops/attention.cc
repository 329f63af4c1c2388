// Operator family "attention" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_attention_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
