// The "buffer_dim_align" block annotation that storage_align writes and flatten_buffers
// honours: its text form (parse/format) and the padded strides it asks for. Knows nothing
// of schedules; lowering includes it alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::ir {

// The annotation key, on a block that writes the aligned buffer.
inline constexpr std::string_view kBufferDimAlignKey = "buffer_dim_align";

// After lowering, the stride (in elements) of dimension `axis` of the buffer named
// `buffer` satisfies stride % factor == offset. 0 <= axis < rank, factor > 0,
// 0 <= offset < factor.
struct BufferDimAlign {
  std::string buffer;
  int64_t axis = 0;
  int64_t factor = 1;
  int64_t offset = 0;
  friend bool operator==(const BufferDimAlign&, const BufferDimAlign&) = default;
};

// "<buffer>:<axis>:<factor>:<offset>" entries joined by ";", sorted by buffer name then
// axis; of entries with the same (buffer, axis), the last one given wins. Buffer names
// must not contain ':' or ';' (InternalError otherwise). An empty list is "".
std::string format_buffer_dim_align(std::vector<BufferDimAlign> entries);
// The inverse of format_buffer_dim_align; malformed text (wrong field count, a number that
// does not parse, factor <= 0, offset outside [0, factor), axis < 0, a duplicate
// (buffer, axis)) throws UserError saying which entry and why.
std::vector<BufferDimAlign> parse_buffer_dim_align(std::string_view text);

// Row-major strides of a buffer of `shape` with the entries of `aligns` that name
// `buffer` applied, innermost first: stride[rank-1] starts at 1, stride[d] at
// stride[d+1] * shape[d+1]; an aligned dimension's stride is then raised to the
// smallest value >= it that is == offset modulo factor. An entry whose axis is not a
// dimension of `shape` throws UserError.
std::vector<int64_t> aligned_strides(const std::string& buffer, const std::vector<int64_t>& shape,
                                     const std::vector<BufferDimAlign>& aligns);
// Elements to allocate for those strides: one past the largest offset,
// 1 + sum(stride[d] * (shape[d] - 1)) (1 for a scalar; 0 when some extent is 0).
int64_t aligned_allocation_size(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

}  // namespace dragon::ir
