// A dense, row-major array on the host holding elements of any IR data type (f16 and
// bf16 as their 16-bit patterns, bool as one byte). What the interpreter, compiled
// executables and checkers read and write; not a device buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "dragon/ir/buffer.h"
#include "dragon/ir/dtype.h"

namespace dragon::tensor {

class HostTensor {
 public:
  HostTensor() = default;
  // Zero-filled.
  HostTensor(ir::DataType dtype, std::vector<int64_t> shape);
  // Shaped and typed like `buffer`, zero-filled.
  static HostTensor like(const ir::Buffer& buffer);

  ir::DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  int64_t size_bytes() const { return static_cast<int64_t>(bytes_.size()); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }

  // Element `flat` (row-major) as a double: exact for every float type and for
  // integers up to 2^53.
  double get(int64_t flat) const;
  // Stores `value` rounded to the element type (round to nearest even for floats,
  // truncation toward zero for ints, value != 0 for bool).
  void set(int64_t flat, double value);
  int64_t get_int(int64_t flat) const;
  void set_int(int64_t flat, int64_t value);
  // Sets every element (NaN sentinels, zeros).
  void fill(double value);

 private:
  ir::DataType dtype_;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::vector<uint8_t> bytes_;
};

}  // namespace dragon::tensor
