// Reading a vocabulary file into a Tokenizer: ids, the text index, the trie and the
// checksum. Encoding and decoding are in tokenizer.cc.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/script/tokenizer.h"
#include "dragon/support/error.h"
#include "vocabulary_text.h"
#include "dragon/support/ascii.h"

namespace dragon::script {

using support::is_ascii_digit;

namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

void fnv(uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string unescape(std::string_view s, int line) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 1 >= s.size()) throw UserError(fmt::format("vocabulary:{}: a lone backslash ends the token", line));
    char e = s[++i];
    switch (e) {
      case 's': out.push_back(' '); break;
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case '\\': out.push_back('\\'); break;
      case 'x': {
        int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) throw UserError(fmt::format("vocabulary:{}: \\x needs two hex digits", line));
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        break;
      }
      default: throw UserError(fmt::format("vocabulary:{}: unknown escape \\{}", line, e));
    }
  }
  return out;
}

}  // namespace

const Tokenizer& Tokenizer::standard() {
  static const Tokenizer tokenizer = from_vocabulary_text(detail::standard_vocabulary_text());
  return tokenizer;
}

void Tokenizer::add_token(std::string text, bool special) {
  const TokenId id = static_cast<TokenId>(texts_.size());
  fnv(checksum_, special ? "S" : "T");
  fnv(checksum_, text);
  fnv(checksum_, std::string_view("\0", 1));
  if (!special) {
    by_text_.emplace(text, id);
    int32_t node = 0;
    for (unsigned char c : text) {
      int32_t next = child(node, c);
      if (next < 0) {
        next = static_cast<int32_t>(trie_.size());
        trie_.emplace_back();
        auto& kids = trie_[node].children;
        auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(c, int32_t{-1}));
        kids.insert(it, {c, next});
      }
      node = next;
    }
    trie_[node].token = id;
  }
  texts_.push_back(std::move(text));
  special_.push_back(special);
}

int32_t Tokenizer::child(int32_t node, uint8_t byte) const {
  const auto& kids = trie_[node].children;
  auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(byte, int32_t{-1}));
  return it != kids.end() && it->first == byte ? it->second : -1;
}

Tokenizer Tokenizer::from_vocabulary_text(std::string_view text) {
  Tokenizer t;
  t.checksum_ = kFnvOffset;
  t.trie_.emplace_back();
  bool have_bytes = false;
  int line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.find(' ');
    std::string_view keyword = line.substr(0, space);
    std::string_view rest = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (keyword == "version") {
      if (!t.version_.empty() || !t.texts_.empty())
        throw UserError(fmt::format("vocabulary:{}: the version must come first, once", line_number));
      t.version_ = std::string(rest);
      fnv(t.checksum_, t.version_);
    } else if (keyword == "special") {
      if (have_bytes) throw UserError(fmt::format("vocabulary:{}: special tokens come before the bytes", line_number));
      t.add_token(std::string(rest), true);
    } else if (keyword == "bytes") {
      if (rest != "256" || have_bytes)
        throw UserError(fmt::format("vocabulary:{}: expected one line 'bytes 256'", line_number));
      have_bytes = true;
      t.first_byte_ = static_cast<TokenId>(t.texts_.size());
      for (int b = 0; b < 256; ++b) t.add_token(std::string(1, static_cast<char>(b)), false);
    } else if (keyword == "token") {
      if (!have_bytes) throw UserError(fmt::format("vocabulary:{}: tokens come after 'bytes 256'", line_number));
      std::string token = unescape(rest, line_number);
      if (token.size() < 2)
        throw UserError(fmt::format("vocabulary:{}: a token of one byte is already a byte token", line_number));
      if (t.by_text_.count(token)) throw UserError(fmt::format("vocabulary:{}: duplicate token", line_number));
      bool all_digits = std::all_of(token.begin(), token.end(), is_ascii_digit);
      // The encoder's number rule needs it: digits begin a token only as a whole number.
      if (is_ascii_digit(token[0]) && !all_digits)
        throw UserError(fmt::format("vocabulary:{}: a token starting with a digit must be all digits", line_number));
      t.add_token(std::move(token), false);
    } else {
      throw UserError(fmt::format("vocabulary:{}: unknown line '{}'", line_number, keyword));
    }
  }
  if (t.version_.empty()) throw UserError("vocabulary: no version line");
  if (!have_bytes) throw UserError("vocabulary: no 'bytes 256' line");
  // Framing needs these; the names are the file's, the roles fixed here.
  const char* names[] = {"<|pad|>", "<|bos|>", "<|eos|>", "<|prompt|>", "<|existing|>", "<|script|>"};
  for (const char* name : names) {
    TokenId found = -1;
    for (size_t id = 0; id < t.texts_.size(); ++id) {
      if (t.special_[id] && t.texts_[id] == name) found = static_cast<TokenId>(id);
    }
    if (found < 0) throw UserError(fmt::format("vocabulary: no special token {}", name));
    t.specials_.push_back(found);
  }
  return t;
}

}  // namespace dragon::script
