// Operator family "recsys": recommender kernels (embedding pooling, feature interaction,
// jagged tensors), registered here from their three parts. No builders live here.
#include "recsys.h"

#include "dragon/ops/families.h"

namespace dragon::ops {

void register_recsys_ops(OpRegistry& registry) {
  register_embedding_ops(registry);
  register_interaction_ops(registry);
  register_jagged_ops(registry);
}

}  // namespace dragon::ops
