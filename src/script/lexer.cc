// Lexing one script line into tokens, and the canonical spellings of numbers and strings.
// The grammar is docs/script-format.md; this file knows nothing of instruction kinds.
#include "lexer.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dragon/script/script.h"
#include "dragon/support/ascii.h"

namespace dragon::script::detail {

using support::is_ascii_digit;
using support::is_ascii_letter;

namespace {

bool is_word_start(char c) { return is_ascii_letter(c) || c == '_'; }
bool is_word_char(char c) { return is_word_start(c) || is_ascii_digit(c) || c == '.'; }
bool is_blank(char c) { return c == ' ' || c == '\t'; }
// Where a token must end: blanks, brackets, a comment or the line's end.
bool is_delimiter(char c) { return is_blank(c) || c == '[' || c == ']' || c == '#'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper-case hex is not canonical
}

}  // namespace

std::vector<Token> lex_line(std::string_view line, int line_number) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto fail = [&](size_t at, std::string message) -> void {
    throw ScriptError(line_number, static_cast<int>(at) + 1, std::move(message));
  };
  while (i < line.size()) {
    char c = line[i];
    if (is_blank(c)) {
      ++i;
      continue;
    }
    if (c == '#') break;
    const size_t start = i;
    const int column = static_cast<int>(start) + 1;
    if (c == '[' || c == ']' || c == '=') {
      tokens.push_back(Token{c == '[' ? TokenKind::kOpen : c == ']' ? TokenKind::kClose : TokenKind::kEquals,
                             line.substr(i, 1), {}, column});
      ++i;
      if (c == '=' && i < line.size() && !is_blank(line[i])) fail(i, "expected a space after '='");
      continue;
    }
    if (c == '"') {
      std::string value;
      ++i;
      bool closed = false;
      while (i < line.size()) {
        char d = line[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (static_cast<unsigned char>(d) < 0x20 || d == 0x7f) fail(i, "a control character must be escaped in a string");
        if (d != '\\') {
          value.push_back(d);
          ++i;
          continue;
        }
        if (i + 1 >= line.size()) fail(i, "the line ends inside an escape");
        char e = line[i + 1];
        switch (e) {
          case '\\': value.push_back('\\'); i += 2; break;
          case '"': value.push_back('"'); i += 2; break;
          case 'n': value.push_back('\n'); i += 2; break;
          case 't': value.push_back('\t'); i += 2; break;
          case 'r': value.push_back('\r'); i += 2; break;
          case 'x': {
            int hi = i + 2 < line.size() ? hex_value(line[i + 2]) : -1;
            int lo = i + 3 < line.size() ? hex_value(line[i + 3]) : -1;
            if (hi < 0 || lo < 0) fail(i, "\\x takes two lower-case hex digits");
            char byte = static_cast<char>(hi * 16 + lo);
            bool has_short_escape = byte == '\n' || byte == '\t' || byte == '\r';
            if (!(static_cast<unsigned char>(byte) < 0x20 || byte == 0x7f) || has_short_escape) {
              fail(i, fmt::format("non-canonical escape {}: \\x is only for other control bytes",
                                  line.substr(i, 4)));
            }
            value.push_back(byte);
            i += 4;
            break;
          }
          default: fail(i, fmt::format("unknown escape \\{}", e));
        }
      }
      if (!closed) fail(line.size(), "unterminated string (the line ends before its closing quote)");
      if (i < line.size() && !is_delimiter(line[i])) fail(i, "expected a space after the string");
      tokens.push_back(Token{TokenKind::kString, line.substr(start, i - start), std::move(value), column});
      continue;
    }
    if (is_ascii_digit(c) || (c == '-' && i + 1 < line.size() && is_ascii_digit(line[i + 1]))) {
      if (c == '-') ++i;
      while (i < line.size() && is_ascii_digit(line[i])) ++i;
      if (i < line.size() && line[i] == '.') {
        ++i;
        if (i >= line.size() || !is_ascii_digit(line[i])) fail(start, "bad number: a digit must follow '.'");
        while (i < line.size() && is_ascii_digit(line[i])) ++i;
      }
      if (i < line.size() && (line[i] == 'e' || line[i] == 'E')) {
        ++i;
        if (i < line.size() && (line[i] == '+' || line[i] == '-')) ++i;
        if (i >= line.size() || !is_ascii_digit(line[i])) fail(start, "bad number: a digit must follow the exponent");
        while (i < line.size() && is_ascii_digit(line[i])) ++i;
      }
      if (i < line.size() && !is_delimiter(line[i])) {
        size_t end = i;
        while (end < line.size() && !is_delimiter(line[end])) ++end;
        fail(start, fmt::format("bad number '{}'", line.substr(start, end - start)));
      }
      tokens.push_back(Token{TokenKind::kNumber, line.substr(start, i - start), {}, column});
      continue;
    }
    if (is_word_start(c)) {
      while (i < line.size() && is_word_char(line[i])) ++i;
      if (i < line.size() && !is_delimiter(line[i])) {
        fail(i, fmt::format("unexpected character '{}' in '{}' (quote strings with other characters)",
                            line[i], line.substr(start, i - start + 1)));
      }
      tokens.push_back(Token{TokenKind::kWord, line.substr(start, i - start), {}, column});
      continue;
    }
    fail(i, fmt::format("unexpected character '{}'", c == '\r' ? std::string("\\r") : std::string(1, c)));
  }
  return tokens;
}

std::string spell_int(int64_t v) { return std::to_string(v); }

std::optional<std::string> spell_float(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  std::string text(buffer, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

std::string spell_string(std::string_view s, std::span<const ShortName> names, bool closed) {
  for (const ShortName& n : names) {
    if (n.full == s) return std::string(n.code);
  }
  bool is_code = false;
  for (const ShortName& n : names) is_code |= n.code == s;
  if (is_bare_word(s) && !is_code && !closed) return std::string(s);
  return quote(s);
}

bool is_float_text(std::string_view text) { return text.find_first_of(".eE") != std::string_view::npos; }

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_float(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace dragon::script::detail
