// The model's tokenizer: one fixed, versioned vocabulary (data/tokenizer/vocab-v1.txt,
// compiled in) for prompts (canonical IR text, existing scripts) and generated scripts.
// Lossless on any byte string; not a learned BPE and not a script parser.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dragon::script {

using TokenId = int32_t;

// Frame markers of a training example; they never come out of encode(text).
enum class SpecialToken : uint8_t { kPad, kBos, kEos, kPrompt, kExisting, kScript };

// A construction example is prompt -> script; a refinement example also carries the
// existing script it improves. The script is absent in a model's input.
struct Example {
  std::string prompt;
  std::optional<std::string> existing_script;
  std::optional<std::string> script;
  friend bool operator==(const Example&, const Example&) = default;
};

class Tokenizer {
 public:
  // The built-in vocabulary (version "dragon-tok-v1").
  static const Tokenizer& standard();
  // A vocabulary from the text of a vocabulary file (the format is described in its
  // header comment); throws UserError "vocabulary:line: why" on a malformed file.
  static Tokenizer from_vocabulary_text(std::string_view text);

  std::string_view version() const { return version_; }
  // FNV-1a over the version and every token's text and kind, in id order: pinned by a
  // test so that a change to the vocabulary is always deliberate.
  uint64_t checksum() const { return checksum_; }
  size_t size() const { return texts_.size(); }

  // Greedy longest match over the vocabulary, with one rule for numbers: a run of digits
  // is one token when the whole run is in the vocabulary and otherwise one token per
  // digit (a token never ends inside a digit run). Any byte string is representable
  // (one byte token per byte as the fallback), and decode(encode(s)) == s.
  std::vector<TokenId> encode(std::string_view text) const;
  // The concatenated texts; throws UserError on a special token or an unknown id.
  std::string decode(std::span<const TokenId> ids) const;

  // [BOS, PROMPT, prompt..., (EXISTING, existing...), SCRIPT, (script..., EOS)]: with no
  // script the sequence ends after SCRIPT, where the model starts generating.
  std::vector<TokenId> encode_example(const Example& example) const;
  // The inverse of encode_example; throws UserError when the frame is malformed.
  Example decode_example(std::span<const TokenId> ids) const;

  TokenId special(SpecialToken token) const { return specials_[static_cast<size_t>(token)]; }
  bool is_special(TokenId id) const;
  // The token's text ("" for a special token); its spelling for display otherwise.
  std::string_view text(TokenId id) const;
  std::string display(TokenId id) const;
  // The id of the token whose text is exactly `text`, if any.
  std::optional<TokenId> find(std::string_view text) const;
  // The byte token of `byte`.
  TokenId byte_token(uint8_t byte) const { return first_byte_ + byte; }

  // The trie of token texts, exposed for the constrained decoder's walk: node 0 is the
  // root; each node lists (byte, child) sorted by byte and the token ending there.
  struct TrieNode {
    std::vector<std::pair<uint8_t, int32_t>> children;
    TokenId token = -1;
  };
  const std::vector<TrieNode>& trie() const { return trie_; }

 private:
  Tokenizer() = default;
  void add_token(std::string text, bool special);
  int32_t child(int32_t node, uint8_t byte) const;

  std::string version_;
  uint64_t checksum_ = 0;
  std::vector<std::string> texts_;  // by id; specials hold their display name
  std::vector<bool> special_;
  std::vector<TokenId> specials_;  // by SpecialToken
  TokenId first_byte_ = 0;
  std::unordered_map<std::string, TokenId> by_text_;  // non-special texts
  std::vector<TrieNode> trie_;
};

}  // namespace dragon::script
