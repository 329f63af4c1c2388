// Scalar and vector data types of the tensor IR: f64, f32, f16, bf16, i8, i32, i64, bool,
// each optionally with lanes (f16x2, f32x4) for vectorized code. Not a value container.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dragon::ir {

enum class TypeCode : uint8_t { kInt, kFloat, kBFloat, kBool };

class DataType {
 public:
  constexpr DataType() = default;
  constexpr DataType(TypeCode code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType f64() { return {TypeCode::kFloat, 64}; }
  static constexpr DataType f32() { return {TypeCode::kFloat, 32}; }
  static constexpr DataType f16() { return {TypeCode::kFloat, 16}; }
  static constexpr DataType bf16() { return {TypeCode::kBFloat, 16}; }
  static constexpr DataType i8() { return {TypeCode::kInt, 8}; }
  static constexpr DataType i32() { return {TypeCode::kInt, 32}; }
  static constexpr DataType i64() { return {TypeCode::kInt, 64}; }
  static constexpr DataType boolean() { return {TypeCode::kBool, 1}; }

  constexpr TypeCode code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  // Storage size of one lane in bytes (bool takes one byte).
  constexpr int bytes() const { return bits_ == 1 ? 1 : bits_ / 8; }

  constexpr bool is_int() const { return code_ == TypeCode::kInt; }
  constexpr bool is_bool() const { return code_ == TypeCode::kBool; }
  // True for f64, f32, f16 and bf16.
  constexpr bool is_float() const { return code_ == TypeCode::kFloat || code_ == TypeCode::kBFloat; }
  constexpr bool is_scalar() const { return lanes_ == 1; }

  constexpr DataType element_of() const { return {code_, bits_, 1}; }
  constexpr DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }

  friend constexpr bool operator==(DataType a, DataType b) {
    return a.code_ == b.code_ && a.bits_ == b.bits_ && a.lanes_ == b.lanes_;
  }

 private:
  TypeCode code_ = TypeCode::kFloat;
  uint8_t bits_ = 32;
  uint16_t lanes_ = 1;
};

// "f32", "bf16", "i64", "bool", "f16x2".
std::string to_string(DataType type);
// Parses the spelling of to_string; nullopt for anything else.
std::optional<DataType> parse_dtype(std::string_view text);
// The valid scalar spellings, for error messages: "f64, f32, f16, bf16, i8, i32, i64, bool".
std::string_view scalar_dtype_names();

// Smallest and largest finite values representable in an integer type.
int64_t int_min_value(DataType type);
int64_t int_max_value(DataType type);

}  // namespace dragon::ir
