// Encoding and decoding text and training examples with a Tokenizer's vocabulary
// (greedy longest match with the whole-number rule). Reading the vocabulary is in
// vocabulary.cc.
#include "dragon/script/tokenizer.h"

#include <fmt/format.h>

#include "dragon/support/error.h"
#include "dragon/support/ascii.h"

namespace dragon::script {

using support::is_ascii_digit;

std::vector<TokenId> Tokenizer::encode(std::string_view text) const {
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 1);
  const size_t n = text.size();
  size_t pos = 0;
  while (pos < n) {
    if (is_ascii_digit(text[pos])) {
      // A number is one token or one token per digit, never a mix, so the model sees
      // each value spelled one way.
      size_t end = pos;
      while (end < n && is_ascii_digit(text[end])) ++end;
      auto it = end - pos >= 2 ? by_text_.find(std::string(text.substr(pos, end - pos))) : by_text_.end();
      if (it != by_text_.end()) {
        out.push_back(it->second);
      } else {
        for (size_t i = pos; i < end; ++i) out.push_back(byte_token(static_cast<uint8_t>(text[i])));
      }
      pos = end;
      continue;
    }
    TokenId best = byte_token(static_cast<uint8_t>(text[pos]));
    size_t best_end = pos + 1;
    int32_t node = 0;
    for (size_t i = pos; i < n; ++i) {
      node = child(node, static_cast<uint8_t>(text[i]));
      if (node < 0) break;
      const TokenId token = trie_[node].token;
      if (token < 0) continue;
      // A token may not end inside a run of digits: "l12" does not match in "l123".
      if (is_ascii_digit(text[i]) && i + 1 < n && is_ascii_digit(text[i + 1])) continue;
      best = token;
      best_end = i + 1;
    }
    out.push_back(best);
    pos = best_end;
  }
  return out;
}

std::string Tokenizer::decode(std::span<const TokenId> ids) const {
  std::string out;
  for (TokenId id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= texts_.size())
      throw UserError(fmt::format("decode: token id {} is not in the vocabulary ({} tokens)", id, texts_.size()));
    if (special_[id]) throw UserError(fmt::format("decode: special token {} inside text", texts_[id]));
    out += texts_[id];
  }
  return out;
}

std::vector<TokenId> Tokenizer::encode_example(const Example& example) const {
  std::vector<TokenId> out = {special(SpecialToken::kBos), special(SpecialToken::kPrompt)};
  auto append = [&](std::string_view text) {
    std::vector<TokenId> ids = encode(text);
    out.insert(out.end(), ids.begin(), ids.end());
  };
  append(example.prompt);
  if (example.existing_script) {
    out.push_back(special(SpecialToken::kExisting));
    append(*example.existing_script);
  }
  out.push_back(special(SpecialToken::kScript));
  if (example.script) {
    append(*example.script);
    out.push_back(special(SpecialToken::kEos));
  }
  return out;
}

Example Tokenizer::decode_example(std::span<const TokenId> ids) const {
  auto fail = [](std::string_view why) { return UserError(fmt::format("decode_example: {}", why)); };
  if (ids.size() < 3 || ids[0] != special(SpecialToken::kBos) || ids[1] != special(SpecialToken::kPrompt))
    throw fail("an example starts with <|bos|> <|prompt|>");
  // The text between two frame markers; any other special token there is malformed.
  size_t pos = 2;
  auto section = [&]() {
    size_t end = pos;
    while (end < ids.size() && !is_special(ids[end])) ++end;
    std::string text = decode(ids.subspan(pos, end - pos));
    pos = end;
    return text;
  };
  Example example;
  example.prompt = section();
  if (pos < ids.size() && ids[pos] == special(SpecialToken::kExisting)) {
    ++pos;
    example.existing_script = section();
  }
  if (pos >= ids.size() || ids[pos] != special(SpecialToken::kScript)) throw fail("expected <|script|>");
  ++pos;
  if (pos == ids.size()) return example;
  example.script = section();
  if (pos + 1 != ids.size() || ids[pos] != special(SpecialToken::kEos))
    throw fail("a script ends with <|eos|>, the last token");
  return example;
}

bool Tokenizer::is_special(TokenId id) const {
  return id >= 0 && static_cast<size_t>(id) < texts_.size() && special_[id];
}

std::string_view Tokenizer::text(TokenId id) const {
  DRAGON_CHECK(id >= 0 && static_cast<size_t>(id) < texts_.size(), "token id {}", id);
  return special_[id] ? std::string_view() : std::string_view(texts_[id]);
}

std::string Tokenizer::display(TokenId id) const {
  DRAGON_CHECK(id >= 0 && static_cast<size_t>(id) < texts_.size(), "token id {}", id);
  if (special_[id]) return texts_[id];
  std::string out;
  for (unsigned char c : texts_[id]) {
    if (c == '\n') {
      out += "\\n";
    } else if (c < 32 || c >= 127) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::optional<TokenId> Tokenizer::find(std::string_view text) const {
  auto it = by_text_.find(std::string(text));
  if (it == by_text_.end()) return std::nullopt;
  return it->second;
}

}  // namespace dragon::script
