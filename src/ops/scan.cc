// Operator family "scan" (being written).
#include "dragon/ops/families.h"

namespace dragon::ops {

void register_scan_ops(OpRegistry& registry) { (void)registry; }

}  // namespace dragon::ops
