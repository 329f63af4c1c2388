// Private to the interpreter: the type policies node classes are specialised by (how each
// float format computes and rounds, how integers wrap, how each element type is stored),
// and the factories of casts and intrinsic calls. Not a public API.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "compiled_code.h"
#include "dragon/ir/expr.h"
#include "dragon/support/error.h"
#include "dragon/support/half.h"

namespace dragon::interp::detail {

// ---- float formats --------------------------------------------------------------------
// f32 and f64 compute natively (IEEE gives the correctly rounded result); f16 and bf16
// compute in double and round once, which is exact for +, -, *, / and sqrt because double
// carries more than twice their precision plus two bits.

enum class FloatFormat : uint8_t { kF64, kF32, kF16, kBF16 };

inline FloatFormat float_format_of(ir::DataType dtype) {
  DRAGON_CHECK(dtype.is_float(), "{} is not a float type", ir::to_string(dtype));
  if (dtype.code() == ir::TypeCode::kBFloat) return FloatFormat::kBF16;
  switch (dtype.bits()) {
    case 64: return FloatFormat::kF64;
    case 32: return FloatFormat::kF32;
    case 16: return FloatFormat::kF16;
  }
  DRAGON_UNREACHABLE("float of {} bits", dtype.bits());
}

struct F64Format {
  using Compute = double;
  static double round(double x) { return x; }
};
struct F32Format {
  using Compute = float;
  static double round(double x) { return static_cast<double>(static_cast<float>(x)); }
};
struct F16Format {
  using Compute = double;
  static double round(double x) { return round_to_f16(x); }
};
struct BF16Format {
  using Compute = double;
  static double round(double x) { return round_to_bf16(x); }
};

inline double round_to_format(FloatFormat format, double x) {
  switch (format) {
    case FloatFormat::kF64: return x;
    case FloatFormat::kF32: return F32Format::round(x);
    case FloatFormat::kF16: return round_to_f16(x);
    case FloatFormat::kBF16: return round_to_bf16(x);
  }
  return x;
}

// ---- float operations ---------------------------------------------------------------
// Applied to Format::Compute values (float for f32, double otherwise).

struct AddOp {
  template <typename T>
  static T apply(T a, T b) {
    return a + b;
  }
};
struct SubOp {
  template <typename T>
  static T apply(T a, T b) {
    return a - b;
  }
};
struct MulOp {
  template <typename T>
  static T apply(T a, T b) {
    return a * b;
  }
};
struct DivOp {
  template <typename T>
  static T apply(T a, T b) {
    return a / b;
  }
};
struct ModOp {
  template <typename T>
  static T apply(T a, T b) {
    return std::fmod(a, b);
  }
};
struct FloorDivOp {
  template <typename T>
  static T apply(T a, T b) {
    return std::floor(a / b);
  }
};
struct FloorModOp {
  template <typename T>
  static T apply(T a, T b) {
    return a - b * std::floor(a / b);
  }
};
// CUDA fminf / fmaxf: a NaN operand yields the other operand (NaN only when both are);
// between -0 and +0, min picks -0 and max picks +0.
struct MinOp {
  template <typename T>
  static T apply(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
  }
};
struct MaxOp {
  template <typename T>
  static T apply(T a, T b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
  }
};

// ---- integers -------------------------------------------------------------------------

// `x` wrapped to a Bits-wide two's complement integer, sign-extended to 64 bits.
template <int Bits>
inline int64_t wrap_int(int64_t x) {
  if constexpr (Bits == 8)
    return static_cast<int8_t>(x);
  else if constexpr (Bits == 16)
    return static_cast<int16_t>(x);
  else if constexpr (Bits == 32)
    return static_cast<int32_t>(x);
  else
    return x;
}

// ---- element storage ------------------------------------------------------------------
// Each reads and writes one element at a flat index of a buffer's bytes; the channel that
// does not match the type is never called (the compiler picks by type).

template <typename Storage>
inline Storage load_raw(const uint8_t* base, int64_t flat) {
  Storage value;
  std::memcpy(&value, base + flat * static_cast<int64_t>(sizeof(Storage)), sizeof(Storage));
  return value;
}
template <typename Storage>
inline void store_raw(uint8_t* base, int64_t flat, Storage value) {
  std::memcpy(base + flat * static_cast<int64_t>(sizeof(Storage)), &value, sizeof(Storage));
}

[[noreturn]] void wrong_channel(const char* what);

template <typename Derived>
struct FloatElement {
  static int64_t read_int(const uint8_t*, int64_t) { wrong_channel("float element read as an integer"); }
  static void write_int(uint8_t*, int64_t, int64_t) { wrong_channel("float element written as an integer"); }
};
template <typename Derived>
struct IntElement {
  static double read_float(const uint8_t*, int64_t) { wrong_channel("integer element read as a float"); }
  static void write_float(uint8_t*, int64_t, double) { wrong_channel("integer element written as a float"); }
};

struct F64Element : FloatElement<F64Element> {
  static double read_float(const uint8_t* base, int64_t flat) { return load_raw<double>(base, flat); }
  static void write_float(uint8_t* base, int64_t flat, double v) { store_raw<double>(base, flat, v); }
};
struct F32Element : FloatElement<F32Element> {
  static double read_float(const uint8_t* base, int64_t flat) { return load_raw<float>(base, flat); }
  static void write_float(uint8_t* base, int64_t flat, double v) {
    store_raw<float>(base, flat, static_cast<float>(v));
  }
};
// Values reaching a store are already rounded to the type, so the float conversion is exact.
struct F16Element : FloatElement<F16Element> {
  static double read_float(const uint8_t* base, int64_t flat) {
    return f16_bits_to_float(load_raw<uint16_t>(base, flat));
  }
  static void write_float(uint8_t* base, int64_t flat, double v) {
    store_raw<uint16_t>(base, flat, float_to_f16_bits(static_cast<float>(v)));
  }
};
struct BF16Element : FloatElement<BF16Element> {
  static double read_float(const uint8_t* base, int64_t flat) {
    return bf16_bits_to_float(load_raw<uint16_t>(base, flat));
  }
  static void write_float(uint8_t* base, int64_t flat, double v) {
    store_raw<uint16_t>(base, flat, float_to_bf16_bits(static_cast<float>(v)));
  }
};
template <typename Storage>
struct SignedElement : IntElement<SignedElement<Storage>> {
  static int64_t read_int(const uint8_t* base, int64_t flat) { return load_raw<Storage>(base, flat); }
  static void write_int(uint8_t* base, int64_t flat, int64_t v) {
    store_raw<Storage>(base, flat, static_cast<Storage>(v));
  }
};
// One byte; any nonzero byte reads as true (garbage-filled memory included).
struct BoolElement : IntElement<BoolElement> {
  static int64_t read_int(const uint8_t* base, int64_t flat) { return base[flat] != 0; }
  static void write_int(uint8_t* base, int64_t flat, int64_t v) { base[flat] = v != 0; }
};

// Node<Element> for the element type of `element_type`, as a pointer to Result.
template <template <typename> class Node, typename Result = ExprCode, typename... Args>
std::unique_ptr<Result> make_element_node(ir::DataType element_type, Args&&... args) {
  switch (element_type.code()) {
    case ir::TypeCode::kBFloat: return std::make_unique<Node<BF16Element>>(std::forward<Args>(args)...);
    case ir::TypeCode::kBool: return std::make_unique<Node<BoolElement>>(std::forward<Args>(args)...);
    case ir::TypeCode::kFloat:
      switch (element_type.bits()) {
        case 64: return std::make_unique<Node<F64Element>>(std::forward<Args>(args)...);
        case 32: return std::make_unique<Node<F32Element>>(std::forward<Args>(args)...);
        case 16: return std::make_unique<Node<F16Element>>(std::forward<Args>(args)...);
      }
      break;
    case ir::TypeCode::kInt:
      switch (element_type.bits()) {
        case 8: return std::make_unique<Node<SignedElement<int8_t>>>(std::forward<Args>(args)...);
        case 16: return std::make_unique<Node<SignedElement<int16_t>>>(std::forward<Args>(args)...);
        case 32: return std::make_unique<Node<SignedElement<int32_t>>>(std::forward<Args>(args)...);
        case 64: return std::make_unique<Node<SignedElement<int64_t>>>(std::forward<Args>(args)...);
      }
      break;
  }
  DRAGON_UNREACHABLE("no storage for {}", ir::to_string(element_type));
}

// ---- factories of other files ---------------------------------------------------------

// compile_cast.cc: `value` converted to `dtype` with the IR's cast semantics.
ExprPtr compile_cast(ir::DataType dtype, ExprPtr value);
// compile_affine.cc: `a kind b` (Add, Sub, Mul) as one node when both operands are sums
// of constant multiples of variables; null (operands untouched) otherwise.
ExprPtr fold_affine(ir::NodeKind kind, ir::DataType dtype, const ExprPtr& a, const ExprPtr& b);
// compile_call.cc: a math intrinsic of result type `dtype`.
ExprPtr compile_call(ir::Intrinsic op, ir::DataType dtype, std::vector<ExprPtr> args);

}  // namespace dragon::interp::detail
