// The "buffer_dim_align" annotation's text form and the strides it implies (see
// include/dragon/ir/buffer_dim_align.h). No IR traversal here: flatten_buffers does that.
#include "dragon/ir/buffer_dim_align.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::ir {

namespace {

bool same_key(const BufferDimAlign& a, const BufferDimAlign& b) { return a.buffer == b.buffer && a.axis == b.axis; }

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

int64_t parse_int(std::string_view field, std::string_view entry, std::string_view what) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size()) {
    throw UserError(fmt::format("buffer_dim_align entry '{}': the {} '{}' is not an integer", entry, what, field));
  }
  return value;
}

}  // namespace

std::string format_buffer_dim_align(std::vector<BufferDimAlign> entries) {
  // Last one wins: keep, for each (buffer, axis), the entry given last.
  std::vector<BufferDimAlign> kept;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    DRAGON_CHECK(it->buffer.find_first_of(":;") == std::string::npos && !it->buffer.empty(),
                 "buffer name '{}' cannot appear in buffer_dim_align", it->buffer);
    if (std::none_of(kept.begin(), kept.end(), [&](const BufferDimAlign& k) { return same_key(k, *it); })) {
      kept.push_back(*it);
    }
  }
  std::sort(kept.begin(), kept.end(), [](const BufferDimAlign& a, const BufferDimAlign& b) {
    return a.buffer != b.buffer ? a.buffer < b.buffer : a.axis < b.axis;
  });
  std::string out;
  for (const BufferDimAlign& e : kept) {
    if (!out.empty()) out += ';';
    out += fmt::format("{}:{}:{}:{}", e.buffer, e.axis, e.factor, e.offset);
  }
  return out;
}

std::vector<BufferDimAlign> parse_buffer_dim_align(std::string_view text) {
  std::vector<BufferDimAlign> out;
  if (text.empty()) return out;
  for (std::string_view entry : split(text, ';')) {
    std::vector<std::string_view> fields = split(entry, ':');
    if (fields.size() != 4 || fields[0].empty()) {
      throw UserError(fmt::format("buffer_dim_align entry '{}': expected <buffer>:<axis>:<factor>:<offset>", entry));
    }
    BufferDimAlign e{std::string(fields[0]), parse_int(fields[1], entry, "axis"), parse_int(fields[2], entry, "factor"),
                     parse_int(fields[3], entry, "offset")};
    if (e.axis < 0) throw UserError(fmt::format("buffer_dim_align entry '{}': the axis is negative", entry));
    if (e.factor <= 0) throw UserError(fmt::format("buffer_dim_align entry '{}': the factor is not positive", entry));
    if (e.offset < 0 || e.offset >= e.factor) {
      throw UserError(fmt::format("buffer_dim_align entry '{}': the offset is not in [0, factor)", entry));
    }
    if (std::any_of(out.begin(), out.end(), [&](const BufferDimAlign& k) { return same_key(k, e); })) {
      throw UserError(fmt::format("buffer_dim_align entry '{}': axis {} of '{}' is aligned twice", entry, e.axis,
                                  e.buffer));
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<int64_t> aligned_strides(const std::string& buffer, const std::vector<int64_t>& shape,
                                     const std::vector<BufferDimAlign>& aligns) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<const BufferDimAlign*> by_axis(shape.size(), nullptr);
  for (const BufferDimAlign& a : aligns) {
    if (a.buffer != buffer) continue;
    if (a.axis < 0 || a.axis >= rank) {
      throw UserError(fmt::format("buffer_dim_align: axis {} of '{}' is not one of its {} dimensions", a.axis, buffer,
                                  rank));
    }
    by_axis[a.axis] = &a;
  }
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (const BufferDimAlign* a = by_axis[d]) {
      // Raise to the next value congruent to offset: e.g. 64 with factor 32, offset 8 -> 72.
      stride += ((a->offset - stride % a->factor) % a->factor + a->factor) % a->factor;
    }
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

int64_t aligned_allocation_size(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  DRAGON_CHECK(shape.size() == strides.size(), "{} extents but {} strides", shape.size(), strides.size());
  int64_t size = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
    size += strides[d] * (shape[d] - 1);
  }
  return size;
}

}  // namespace dragon::ir
