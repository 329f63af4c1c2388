// Spelling and limits of IR data types.
#include "dragon/ir/dtype.h"

#include <charconv>
#include <limits>

#include "dragon/support/error.h"

namespace dragon::ir {
namespace {

std::string_view scalar_name(DataType type) {
  switch (type.code()) {
    case TypeCode::kBool: return "bool";
    case TypeCode::kBFloat: return type.bits() == 16 ? "bf16" : "";
    case TypeCode::kFloat:
      switch (type.bits()) {
        case 16: return "f16";
        case 32: return "f32";
        case 64: return "f64";
        default: return "";
      }
    case TypeCode::kInt:
      switch (type.bits()) {
        case 8: return "i8";
        case 32: return "i32";
        case 64: return "i64";
        default: return "";
      }
  }
  return "";
}

std::optional<DataType> parse_scalar(std::string_view text) {
  if (text == "f64") return DataType::f64();
  if (text == "f32") return DataType::f32();
  if (text == "f16") return DataType::f16();
  if (text == "bf16") return DataType::bf16();
  if (text == "i8") return DataType::i8();
  if (text == "i32") return DataType::i32();
  if (text == "i64") return DataType::i64();
  if (text == "bool") return DataType::boolean();
  return std::nullopt;
}

}  // namespace

std::string to_string(DataType type) {
  std::string_view name = scalar_name(type);
  DRAGON_CHECK(!name.empty(), "unsupported data type code {} bits {}", static_cast<int>(type.code()), type.bits());
  std::string out(name);
  if (type.lanes() != 1) out += "x" + std::to_string(type.lanes());
  return out;
}

std::optional<DataType> parse_dtype(std::string_view text) {
  if (auto scalar = parse_scalar(text)) return scalar;
  // Vector types: the longest scalar prefix followed by "x<lanes>".
  auto x = text.rfind('x');
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  auto scalar = parse_scalar(text.substr(0, x));
  if (!scalar) return std::nullopt;
  std::string_view digits = text.substr(x + 1);
  int lanes = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), lanes);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || lanes < 2 || lanes > 64) return std::nullopt;
  if (digits.front() == '0') return std::nullopt;  // one canonical spelling
  return scalar->with_lanes(lanes);
}

std::string_view scalar_dtype_names() { return "f64, f32, f16, bf16, i8, i32, i64, bool"; }

int64_t int_min_value(DataType type) {
  DRAGON_CHECK(type.is_int() || type.is_bool(), "{} is not an integer type", to_string(type));
  if (type.is_bool()) return 0;
  if (type.bits() == 64) return std::numeric_limits<int64_t>::min();
  return -(int64_t{1} << (type.bits() - 1));
}

int64_t int_max_value(DataType type) {
  DRAGON_CHECK(type.is_int() || type.is_bool(), "{} is not an integer type", to_string(type));
  if (type.is_bool()) return 1;
  if (type.bits() == 64) return std::numeric_limits<int64_t>::max();
  return (int64_t{1} << (type.bits() - 1)) - 1;
}

}  // namespace dragon::ir
