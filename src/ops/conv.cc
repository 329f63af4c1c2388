// Operator family "conv" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_conv_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
