// Internal to the recsys operator family: the register functions of its parts (one
// file each) and the small helpers they share. Not a public header.
#pragma once

#include "dragon/ops/op_registry.h"
#include "dragon/ops/te.h"

namespace dragon::ops {

void register_embedding_ops(OpRegistry& registry);    // recsys_embedding.cc
void register_interaction_ops(OpRegistry& registry);  // recsys_interaction.cc
void register_jagged_ops(OpRegistry& registry);       // recsys_jagged.cc

namespace recsys {

// The index-type parameter shared by ops with indices, offsets or lengths.
inline OpParam index_dtype_param() {
  return dtype_param("index_dtype", "i64", "type of indices, offsets and lengths", {"i32", "i64"});
}

// Length of bag `bag` from B+1 offsets: offsets[bag + 1] - offsets[bag].
inline Expr bag_length(const Tensor& offsets, const Expr& bag) { return offsets(bag + 1) - offsets(bag); }

}  // namespace recsys
}  // namespace dragon::ops
