// HostTensor: element access by flat index with conversion to and from double. Not the
// interpreter's hot path (it reads buffers through typed pointers, src/interp/compiled_code.h).
#include "dragon/tensor/host_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "dragon/support/error.h"
#include "dragon/support/half.h"

namespace dragon::tensor {
namespace {

// float -> int with the semantics of the IR's cast: truncate toward zero, saturate at
// the type's limits, NaN -> 0.
int64_t saturating_truncate(double value, ir::DataType dtype) {
  if (std::isnan(value)) return 0;
  int64_t lo = ir::int_min_value(dtype), hi = ir::int_max_value(dtype);
  double t = std::trunc(value);
  // -2^(bits-1) is exact in double; 2^(bits-1) - 1 may not be, so compare against 2^(bits-1).
  if (t <= static_cast<double>(lo)) return lo;
  if (t >= -static_cast<double>(lo)) return hi;
  return static_cast<int64_t>(t);
}

// Wraps `value` to a `bits`-wide two's complement integer, sign-extended to 64 bits.
int64_t wrap_to_bits(int64_t value, int bits) {
  if (bits >= 64) return value;
  int shift = 64 - bits;
  return static_cast<int64_t>(static_cast<uint64_t>(value) << shift) >> shift;
}

}  // namespace

HostTensor::HostTensor(ir::DataType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  DRAGON_CHECK(dtype.is_scalar(), "host tensors hold scalar elements, not {}", ir::to_string(dtype));
  num_elements_ = 1;
  for (int64_t extent : shape_) {
    DRAGON_CHECK(extent >= 0, "negative extent {} in a host tensor shape", extent);
    num_elements_ *= extent;
  }
  bytes_.assign(static_cast<size_t>(num_elements_) * dtype.bytes(), 0);
}

HostTensor HostTensor::like(const ir::Buffer& buffer) { return HostTensor(buffer->dtype, buffer->shape); }

double HostTensor::get(int64_t flat) const {
  DRAGON_CHECK(flat >= 0 && flat < num_elements_, "element {} of a host tensor of {} elements", flat, num_elements_);
  const uint8_t* p = bytes_.data() + flat * dtype_.bytes();
  switch (dtype_.code()) {
    case ir::TypeCode::kFloat:
      if (dtype_.bits() == 64) return *reinterpret_cast<const double*>(p);
      if (dtype_.bits() == 32) return *reinterpret_cast<const float*>(p);
      DRAGON_CHECK(dtype_.bits() == 16, "float of {} bits", dtype_.bits());
      return f16_bits_to_float(*reinterpret_cast<const uint16_t*>(p));
    case ir::TypeCode::kBFloat: return bf16_bits_to_float(*reinterpret_cast<const uint16_t*>(p));
    case ir::TypeCode::kBool: return *p != 0 ? 1.0 : 0.0;
    case ir::TypeCode::kInt: return static_cast<double>(get_int(flat));
  }
  DRAGON_UNREACHABLE("type code");
}

void HostTensor::set(int64_t flat, double value) {
  DRAGON_CHECK(flat >= 0 && flat < num_elements_, "element {} of a host tensor of {} elements", flat, num_elements_);
  uint8_t* p = bytes_.data() + flat * dtype_.bytes();
  switch (dtype_.code()) {
    case ir::TypeCode::kFloat:
      if (dtype_.bits() == 64) {
        *reinterpret_cast<double*>(p) = value;
      } else if (dtype_.bits() == 32) {
        *reinterpret_cast<float*>(p) = static_cast<float>(value);
      } else {
        DRAGON_CHECK(dtype_.bits() == 16, "float of {} bits", dtype_.bits());
        // Round once from double; the f16 value is then exact in float.
        *reinterpret_cast<uint16_t*>(p) = float_to_f16_bits(static_cast<float>(round_to_f16(value)));
      }
      return;
    case ir::TypeCode::kBFloat:
      *reinterpret_cast<uint16_t*>(p) = float_to_bf16_bits(static_cast<float>(round_to_bf16(value)));
      return;
    case ir::TypeCode::kBool: *p = value != 0 ? 1 : 0; return;
    case ir::TypeCode::kInt: set_int(flat, saturating_truncate(value, dtype_)); return;
  }
  DRAGON_UNREACHABLE("type code");
}

int64_t HostTensor::get_int(int64_t flat) const {
  DRAGON_CHECK(flat >= 0 && flat < num_elements_, "element {} of a host tensor of {} elements", flat, num_elements_);
  const uint8_t* p = bytes_.data() + flat * dtype_.bytes();
  if (dtype_.is_float()) return saturating_truncate(get(flat), ir::DataType::i64());
  if (dtype_.is_bool()) return *p != 0 ? 1 : 0;
  switch (dtype_.bits()) {
    case 8: return *reinterpret_cast<const int8_t*>(p);
    case 16: return *reinterpret_cast<const int16_t*>(p);
    case 32: return *reinterpret_cast<const int32_t*>(p);
    case 64: return *reinterpret_cast<const int64_t*>(p);
  }
  DRAGON_UNREACHABLE("int of {} bits", dtype_.bits());
}

void HostTensor::set_int(int64_t flat, int64_t value) {
  DRAGON_CHECK(flat >= 0 && flat < num_elements_, "element {} of a host tensor of {} elements", flat, num_elements_);
  uint8_t* p = bytes_.data() + flat * dtype_.bytes();
  if (dtype_.is_float()) {
    set(flat, static_cast<double>(value));
    return;
  }
  if (dtype_.is_bool()) {
    *p = value != 0 ? 1 : 0;
    return;
  }
  // Narrowing wraps, like the IR's int -> int cast.
  int64_t wrapped = wrap_to_bits(value, dtype_.bits());
  switch (dtype_.bits()) {
    case 8: *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(wrapped); return;
    case 16: *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(wrapped); return;
    case 32: *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(wrapped); return;
    case 64: *reinterpret_cast<int64_t*>(p) = wrapped; return;
  }
  DRAGON_UNREACHABLE("int of {} bits", dtype_.bits());
}

void HostTensor::fill(double value) {
  if (num_elements_ == 0) return;
  set(0, value);
  // Copy the first element's bytes everywhere: one conversion, and NaN payloads stay.
  size_t width = static_cast<size_t>(dtype_.bytes());
  for (int64_t i = 1; i < num_elements_; ++i) std::memcpy(bytes_.data() + i * width, bytes_.data(), width);
}

}  // namespace dragon::tensor
