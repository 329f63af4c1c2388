// The lexical rules of canonical script words (script_words.h), mirrored from
// docs/script-format.md so that partial words can be judged character by character.
#include "script_words.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace dragon::decode {

using script::is_bare_word;
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_word_char(char c) { return is_word_start(c) || is_digit(c) || c == '.'; }
bool is_lower_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
int hex_value(char c) { return is_digit(c) ? c - '0' : c - 'a' + 10; }

// Bytes with a short escape; other bytes below 0x20 and 0x7f are written \xHH.
char short_escape(unsigned char c) {
  switch (c) {
    case '\\': return '\\';
    case '"': return '"';
    case '\n': return 'n';
    case '\t': return 't';
    case '\r': return 'r';
    default: return 0;
  }
}
bool needs_hex(unsigned char c) { return (c < 0x20 || c == 0x7f) && short_escape(c) == 0; }

}  // namespace

std::optional<int64_t> parse_canonical_int(std::string_view word) {
  std::string_view digits = word;
  if (!digits.empty() && digits[0] == '-') digits.remove_prefix(1);
  if (digits.empty() || (digits[0] == '0' && (digits.size() > 1 || word[0] == '-'))) return std::nullopt;
  for (char c : digits) {
    if (!is_digit(c)) return std::nullopt;
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

std::string spell_float(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string text(buffer, end);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

std::optional<double> parse_canonical_float(std::string_view word) {
  if (word.find_first_of(".eE") == std::string_view::npos) return std::nullopt;
  double value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (ec != std::errc() || end != word.data() + word.size() || !std::isfinite(value)) return std::nullopt;
  if (spell_float(value) != word) return std::nullopt;
  return value;
}

bool int_prefix_viable(std::string_view prefix, int64_t lo, int64_t hi) {
  if (lo > hi) return false;
  bool negative = !prefix.empty() && prefix[0] == '-';
  std::string_view digits = negative ? prefix.substr(1) : prefix;
  if (negative && hi >= 0 && lo >= 0) return false;
  if (digits.empty()) return negative ? lo < 0 : true;
  for (char c : digits) {
    if (!is_digit(c)) return false;
  }
  if (digits[0] == '0') {  // only "0" itself
    return digits.size() == 1 && !negative && lo <= 0 && 0 <= hi;
  }
  if (digits.size() > 19) return false;
  // Magnitudes with this digit prefix: [p * 10^k, (p + 1) * 10^k - 1] for k = 0, 1, ...
  unsigned __int128 p = 0;
  for (char c : digits) p = p * 10 + static_cast<unsigned>(c - '0');
  // The magnitude range allowed by [lo, hi] on this sign.
  unsigned __int128 mag_lo, mag_hi;
  if (negative) {
    if (lo >= 0) return false;
    mag_lo = hi < 0 ? static_cast<unsigned __int128>(-static_cast<__int128>(hi)) : 1;
    mag_hi = static_cast<unsigned __int128>(-static_cast<__int128>(lo));
  } else {
    if (hi < 1) return false;
    mag_lo = lo < 1 ? 1 : static_cast<unsigned __int128>(lo);
    mag_hi = static_cast<unsigned __int128>(hi);
  }
  for (unsigned __int128 scale = 1, a = p; a <= mag_hi; scale *= 10, a = p * scale) {
    unsigned __int128 b = (p + 1) * scale - 1;
    if (b >= mag_lo) return true;
  }
  return false;
}

std::string spell_string(std::string_view s, std::span<const ShortName> names) {
  for (const ShortName& n : names) {
    if (n.full == s) return std::string(n.code);
  }
  bool is_code = false;
  for (const ShortName& n : names) is_code |= n.code == s;
  if (is_bare_word(s) && !is_code) return std::string(s);
  std::string out = "\"";
  for (unsigned char c : s) {
    if (char e = short_escape(c)) {
      out.push_back('\\');
      out.push_back(e);
    } else if (needs_hex(c)) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

std::optional<std::string> parse_string_word(std::string_view word, std::span<const ShortName> names,
                                             bool enum_slot) {
  if (word.empty()) return std::nullopt;
  std::string value;
  if (word[0] != '"') {
    if (!is_bare_word(word)) return std::nullopt;
    for (const ShortName& n : names) {
      if (n.code == word) return std::string(n.full);
    }
    if (enum_slot) return std::nullopt;
    value = std::string(word);
  } else {
    if (word.size() < 2 || word.back() != '"') return std::nullopt;
    for (size_t i = 1; i + 1 < word.size(); ++i) {
      char c = word[i];
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (i + 2 >= word.size()) return std::nullopt;
      char e = word[++i];
      switch (e) {
        case '\\': value.push_back('\\'); break;
        case '"': value.push_back('"'); break;
        case 'n': value.push_back('\n'); break;
        case 't': value.push_back('\t'); break;
        case 'r': value.push_back('\r'); break;
        case 'x':
          if (i + 3 >= word.size() || !is_lower_hex(word[i + 1]) || !is_lower_hex(word[i + 2])) return std::nullopt;
          value.push_back(static_cast<char>(hex_value(word[i + 1]) * 16 + hex_value(word[i + 2])));
          i += 2;
          break;
        default: return std::nullopt;
      }
    }
  }
  // Exactly one spelling per string: the one spell_string writes.
  if (spell_string(value, names) != word) return std::nullopt;
  return value;
}

bool bare_prefix_viable(std::string_view prefix) {
  if (prefix.empty()) return true;
  if (!is_word_start(prefix[0])) return false;
  for (char c : prefix) {
    if (!is_word_char(c)) return false;
  }
  return true;
}

bool bare_word_char(char c) { return is_word_char(c); }

bool quoted_prefix_viable(std::string_view prefix) {
  if (prefix.empty() || prefix[0] != '"') return false;
  for (size_t i = 1; i < prefix.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(prefix[i]);
    if (c == '"') return false;  // a closing quote ends the word; judged whole
    if (c < 0x20 || c == 0x7f) return false;
    if (c != '\\') continue;
    if (i + 1 == prefix.size()) return true;
    char e = prefix[++i];
    if (e == '\\' || e == '"' || e == 'n' || e == 't' || e == 'r') continue;
    if (e != 'x') return false;
    // \xHH only for bytes without a short escape below 0x20, and 0x7f.
    if (i + 1 == prefix.size()) return true;
    char h = prefix[++i];
    if (h != '0' && h != '1' && h != '7') return false;
    if (i + 1 == prefix.size()) return true;
    char l = prefix[++i];
    if (!is_lower_hex(l)) return false;
    if (!needs_hex(static_cast<unsigned char>(hex_value(h) * 16 + hex_value(l)))) return false;
  }
  return true;
}

bool float_prefix_viable(std::string_view w, bool nonnegative) {
  if (w.size() > 24) return false;  // the longest shortest spelling: -1.2345678901234567e-308
  size_t i = 0;
  if (i < w.size() && w[i] == '-') {
    if (nonnegative) return false;
    ++i;
  }
  // At most 17 significant digits (a double's shortest spelling needs no more).
  size_t significant = 0;
  auto digit = [&](char c) {
    if (c != '0' || significant > 0) ++significant;
  };
  const size_t int_start = i;
  while (i < w.size() && w[i] >= '0' && w[i] <= '9') digit(w[i++]);
  const size_t int_digits = i - int_start;
  if (int_digits > 1 && w[int_start] == '0') return false;
  if (i == w.size()) return significant <= 17;
  if (int_digits == 0) return false;
  if (w[i] == '.') {
    ++i;
    while (i < w.size() && w[i] >= '0' && w[i] <= '9') digit(w[i++]);
    if (significant > 17) return false;
    if (i == w.size()) return true;
  }
  if (significant > 17) return false;
  // Scientific: one nonzero digit before the point, a signed exponent of 2 or 3 digits.
  if (w[i] != 'e' || int_digits != 1 || w[int_start] == '0') return false;
  ++i;
  if (i == w.size()) return true;
  if (w[i] != '+' && w[i] != '-') return false;
  ++i;
  const size_t exp_start = i;
  while (i < w.size() && w[i] >= '0' && w[i] <= '9') ++i;
  return i == w.size() && i - exp_start <= 3;
}

bool probability_prefix_viable(std::string_view w) {
  if (w.empty()) return true;
  if (w[0] < '0' || w[0] > '9') return false;
  if (w.size() == 1) return true;
  if (w[1] != '.') return false;
  size_t significant = w[0] != '0', leading_zeros = 0;
  for (size_t i = 2; i < w.size(); ++i) {
    if (w[i] < '0' || w[i] > '9') return false;
    if (w[i] != '0' || significant > 0) ++significant;
    else ++leading_zeros;
  }
  if (w[0] == '0' && leading_zeros > 2 && !(w.size() == 3)) return false;
  // 15 significant digits ending in 0 can only end as "d.0".
  if (significant > 15 || (significant == 15 && w.back() == '0')) return false;
  return true;
}

bool quoted_closed(std::string_view w) {
  if (w.size() < 2 || w[0] != '"' || w.back() != '"') return false;
  size_t backslashes = 0;
  for (size_t i = w.size() - 1; i-- > 1 && w[i] == '\\';) ++backslashes;
  return backslashes % 2 == 0;
}

}  // namespace dragon::decode
