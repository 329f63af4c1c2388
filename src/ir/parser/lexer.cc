// The lexer of the IR text: identifiers, numbers, strings and punctuation.
#include "lexer.h"

#include "dragon/support/error.h"

namespace dragon::ir::parser {
namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_space_and_comments();
      Token token;
      token.line = line_;
      token.column = column_;
      if (pos_ >= text_.size()) {
        token.end_line = line_;
        token.end_column = column_;
        tokens.push_back(std::move(token));
        return tokens;
      }
      char c = text_[pos_];
      if (is_ident_start(c)) {
        token.kind = TokenKind::kIdent;
        token.text = identifier();
      } else if (is_digit(c)) {
        token.kind = TokenKind::kNumber;
        token.text = number();
      } else if (c == '"') {
        token.kind = TokenKind::kString;
        token.text = string_literal();
      } else {
        token.kind = TokenKind::kPunct;
        token.text = punctuation();
      }
      token.end_line = line_;
      token.end_column = column_;
      tokens.push_back(std::move(token));
    }
  }

 private:
  [[noreturn]] void fail(std::string_view message) const { throw UserError::at(source_, line_, column_, message); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  // Whitespace, and comments from '#' to the end of the line (for hand-written files;
  // the printer writes none).
  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        advance();
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else {
        return;
      }
    }
  }

  std::string identifier() {
    size_t start = pos_;
    while (is_ident_char(peek())) advance();
    // Dotted names: threadIdx.x, shared.dyn.
    while (peek() == '.' && is_ident_start(peek(1))) {
      advance();
      while (is_ident_char(peek())) advance();
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string number() {
    size_t start = pos_;
    while (is_digit(peek())) advance();
    if (peek() == '.' && is_digit(peek(1))) {
      advance();
      while (is_digit(peek())) advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      advance();
      if (peek() == '+' || peek() == '-') advance();
      while (is_digit(peek())) advance();
    }
    // The type suffix: i64, f32, bf16, ...
    while (is_ident_char(peek())) advance();
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string string_literal() {
    int start_line = line_, start_column = column_;
    advance();  // the opening quote
    std::string value;
    while (true) {
      if (pos_ >= text_.size() || peek() == '\n') {
        throw UserError::at(source_, start_line, start_column, "unterminated string");
      }
      char c = peek();
      if (c == '"') {
        advance();
        return value;
      }
      if (c != '\\') {
        value += c;
        advance();
        continue;
      }
      advance();
      char e = peek();
      if (e == '\\' || e == '"') {
        value += e;
        advance();
      } else if (e == 'n') {
        value += '\n';
        advance();
      } else if (e == 't') {
        value += '\t';
        advance();
      } else if (e == 'x') {
        advance();
        int code = 0;
        for (int i = 0; i < 2; ++i) {
          char h = peek();
          int digit = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : -1;
          if (digit < 0) fail("\\x needs two lowercase hex digits");
          code = code * 16 + digit;
          advance();
        }
        value += static_cast<char>(code);
      } else {
        fail("unknown escape in string (use \\\\, \\\", \\n, \\t or \\xhh)");
      }
    }
  }

  std::string punctuation() {
    static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "//", "&&", "||", "+:"};
    for (std::string_view two : kTwo) {
      if (peek() == two[0] && peek(1) == two[1]) {
        advance();
        advance();
        return std::string(two);
      }
    }
    static constexpr std::string_view kOne = "()[]{},:=<>+-*/%!@";
    char c = peek();
    if (kOne.find(c) == std::string_view::npos) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u >= 0x7f) fail(fmt::format("unexpected byte 0x{:02x}", u));
      fail(fmt::format("unexpected character '{}'", c));
    }
    advance();
    return std::string(1, c);
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text, std::string_view source_name) {
  return Lexer(text, source_name).run();
}

}  // namespace dragon::ir::parser
