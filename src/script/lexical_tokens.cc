// The neutral lexical token count (lexical_tokens.h): letters, digits, single symbols.
#include "dragon/script/lexical_tokens.h"

namespace dragon::script {

namespace {

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::vector<std::string_view> lexical_tokens(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (is_space(c)) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (is_letter(c)) {
      while (end < text.size() && is_letter(text[end])) ++end;
    } else if (is_digit(c)) {
      while (end < text.size() && is_digit(text[end])) ++end;
    }
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

size_t count_lexical_tokens(std::string_view text) { return lexical_tokens(text).size(); }

}  // namespace dragon::script
