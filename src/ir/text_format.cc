// Lexical rules shared by the IR printer and parser.
#include "text_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "dragon/support/half.h"

namespace dragon::ir::text {
namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

// Only words whose position does not already tell them apart from a name: statement
// keywords (a buffer named "reads" would start a store) and literal words. Calls, casts and
// loop kinds are told apart by what follows them, so "max" or "out" can stay a name.
constexpr std::string_view kKeywords[] = {
    "alloc", "block", "else", "eval", "false", "for",  "func",   "if",
    "in",    "inf",   "init", "nan",  "reads", "true", "writes",
};

double round_to(DataType dtype, double value) {
  if (dtype.bits() == 64) return value;
  if (dtype.bits() == 32) return round_to_f32(value);
  return dtype.code() == TypeCode::kBFloat ? round_to_bf16(value) : round_to_f16(value);
}

std::string shortest_double(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, end);
}

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  for (char c : s) {
    if (!is_ident_char(c)) return false;
  }
  return true;
}

bool is_dotted_identifier(std::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!is_identifier(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_reserved_word(std::string_view s) {
  for (std::string_view k : kKeywords) {
    if (s == k) return true;
  }
  // Literal words: inff32, nanbf16, ...
  if (s.size() > 3 && (s.substr(0, 3) == "inf" || s.substr(0, 3) == "nan") && parse_dtype(s.substr(3))) return true;
  return false;
}

std::optional<double> parse_float_digits(DataType dtype, std::string_view digits) {
  const char* first = digits.data();
  const char* last = first + digits.size();
  double value = 0;
  if (dtype.bits() == 32) {
    // Read f32 directly: through double first could round twice.
    float f = 0;
    auto [ptr, ec] = std::from_chars(first, last, f);
    if (ec != std::errc() || ptr != last) return std::nullopt;
    value = f;
  } else {
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last) return std::nullopt;
    value = round_to(dtype, value);
  }
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string float_digits(DataType dtype, double value) {
  char buf[64];
  if (dtype.bits() == 64) return shortest_double(value);
  if (dtype.bits() == 32) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value));
    return std::string(buf, end);
  }
  // 16-bit floats: the fewest significant digits that read back to the value, then the
  // shortest spelling of that decimal ("100" rather than "1e+02").
  for (int precision = 1; precision <= 17; ++precision) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, precision);
    std::string text(buf, end);
    auto back = parse_float_digits(dtype, text);
    if (!back || *back != value) continue;
    double decimal = 0;
    std::from_chars(text.data(), text.data() + text.size(), decimal);
    std::string shorter = shortest_double(decimal);
    auto again = parse_float_digits(dtype, shorter);
    return again && *again == value && shorter.size() <= text.size() ? shorter : text;
  }
  return shortest_double(value);
}

std::string float_literal(DataType dtype, double value) {
  std::string suffix = to_string(dtype);
  if (std::isnan(value)) return "nan" + suffix;
  if (std::isinf(value)) return (value < 0 ? "-inf" : "inf") + suffix;
  return float_digits(dtype, value) + suffix;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string dotted_or_quoted(std::string_view s) { return is_dotted_identifier(s) ? std::string(s) : quote(s); }

std::string annotation_value(const AnnotationValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&value)) return quote(*s);
  double d = std::get<double>(value);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  std::string text = shortest_double(d);
  // A double must not read back as an integer.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

}  // namespace dragon::ir::text
