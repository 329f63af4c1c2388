// Internal: the tokens of one script line and the canonical spellings of values
// (numbers, strings). Shared by the encoder and the line decoder; not a public API.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/script/script_schema.h"

namespace dragon::script::detail {

enum class TokenKind : uint8_t {
  kWord,    // bare word, RV name, true/false/None, mnemonic
  kNumber,  // INT or FLOAT, text as written
  kString,  // quoted; `value` holds the unescaped bytes
  kOpen,    // [
  kClose,   // ]
  kEquals,  // = (the decision marker)
};

struct Token {
  TokenKind kind;
  std::string_view text;  // as written (for a string, with its quotes)
  std::string value;      // kString: the unescaped string
  int column;             // 1-based byte column
};

// The tokens of `line` up to a comment. `line_number` is for errors: ScriptError on an
// unexpected character, an unterminated string, a bad escape, or a malformed number.
std::vector<Token> lex_line(std::string_view line, int line_number);

// Canonical spellings.
std::string spell_int(int64_t v);
// Shortest round-trip text, ".0" appended when it has no '.' or exponent; nullopt for
// non-finite values, which the format cannot write.
std::optional<std::string> spell_float(double v);
// A string equal to a name's full text is written as its code; otherwise bare when a
// bare word, not a code of `names` and not in an enum slot (`closed`); else quoted.
std::string spell_string(std::string_view s, std::span<const ShortName> names, bool closed);
std::string quote(std::string_view s);

// A number token's value: an int64 when it has no '.' or exponent, else a double.
// nullopt when out of range. Whether the text is canonical is for the caller to check.
std::optional<int64_t> parse_int(std::string_view text);
std::optional<double> parse_float(std::string_view text);
bool is_float_text(std::string_view text);

}  // namespace dragon::script::detail
