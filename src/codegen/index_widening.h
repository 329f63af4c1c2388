// Index widening for the emitter's index analysis: lowering indexes a buffer of more than
// 2^31 elements in i64 but keeps each dimension's index in i32 under a cast
// (flatten_buffers: i64(i32 index) * stride + ...), and the analyzer cannot see through a
// cast, so it fails to simplify i64(x + 1) * 128 - i64(x) * 128 to 128 or to prove that
// i64(y * 8) is a multiple of 8. Private to codegen.
#pragma once

#include "dragon/ir/simplify.h"

namespace dragon::codegen {

// `index` with every i64(e), e an i32 expression, replaced by e computed in i64 (variables
// and other leaves cast one by one, constants and +, -, *, /, %, floordiv, floormod, min
// and max rebuilt in i64), where `analyzer` proves that no operation of e leaves i32: then
// e does not wrap in i32 and both forms have the same value. A cast it cannot prove so is
// kept. The very same node when nothing changes (an index without such casts).
ir::Expr widen_index_casts(const ir::Expr& index, const ir::Analyzer& analyzer);

}  // namespace dragon::codegen
