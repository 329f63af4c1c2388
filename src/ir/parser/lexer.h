// The tokens of the IR text and the lexer that makes them, with 1-based line and column
// for error messages. Not the grammar (parser.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dragon::ir::parser {

enum class TokenKind : uint8_t {
  kIdent,   // a name or keyword, possibly dotted: threadIdx.x
  kNumber,  // unsigned digits with optional fraction, exponent and type suffix: 5i64, 0.5f32
  kString,  // a quoted string; text holds the unescaped value
  kPunct,   // ( ) [ ] { } , : = == != < <= > >= + +: - * / // % ! && || @
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int line = 1;
  int column = 1;
  // Where the token ends: line and the column one past its last character.
  int end_line = 1;
  int end_column = 1;
};

// Splits `text` into tokens ending with one kEnd. Throws UserError at the offending
// character for anything that is not a token (a stray '$', an unterminated string).
std::vector<Token> tokenize(std::string_view text, std::string_view source_name);

}  // namespace dragon::ir::parser
