// The neutral lexical token count (lexical_tokens.h): letters, digits, single symbols.
#include "dragon/script/lexical_tokens.h"
#include "dragon/support/ascii.h"

namespace dragon::script {

using support::is_ascii_digit;
using support::is_ascii_letter;
using support::is_ascii_space;

std::vector<std::string_view> lexical_tokens(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (is_ascii_space(c)) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (is_ascii_letter(c)) {
      while (end < text.size() && is_ascii_letter(text[end])) ++end;
    } else if (is_ascii_digit(c)) {
      while (end < text.size() && is_ascii_digit(text[end])) ++end;
    }
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

size_t count_lexical_tokens(std::string_view text) { return lexical_tokens(text).size(); }

}  // namespace dragon::script
