// Character classes of the ASCII text formats (scripts, IR text, tokens): fixed, unlike
// <cctype>'s, which depend on the C locale and are undefined for negative chars.
#pragma once

namespace dragon::support {

constexpr bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// The whitespace of C's isspace in the "C" locale.
constexpr bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace dragon::support
