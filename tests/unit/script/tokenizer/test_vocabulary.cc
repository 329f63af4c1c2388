// The vocabulary is fixed: its version and checksum are pinned here, so any change to
// data/tokenizer/vocab-v1.txt fails this test until it is made on purpose. Also the
// vocabulary file format's errors.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dragon/script/tokenizer.h"
#include "dragon/support/error.h"

namespace dragon::script {
namespace {

TEST(Vocabulary, VersionAndChecksumArePinned) {
  const Tokenizer& t = Tokenizer::standard();
  EXPECT_EQ(t.version(), "dragon-tok-v1");
  // Update together with the version when the vocabulary changes deliberately.
  EXPECT_EQ(t.checksum(), 0xc7a3069f52b6520full) << std::hex << "checksum 0x" << t.checksum();
  EXPECT_EQ(t.size(), 2653u);
}

TEST(Vocabulary, BuiltInMatchesTheDataFile) {
  // The compiled-in text is the file's text (CMake reconfigures when the file changes).
  std::ifstream in(std::string(DRAGON_SOURCE_DIR) + "/data/tokenizer/vocab-v1.txt", std::ios::binary);
  ASSERT_TRUE(in) << "data/tokenizer/vocab-v1.txt";
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(Tokenizer::from_vocabulary_text(text.str()).checksum(), Tokenizer::standard().checksum());
}

TEST(Vocabulary, SpecialsBytesAndTextsAreDistinct) {
  const Tokenizer& t = Tokenizer::standard();
  for (SpecialToken s : {SpecialToken::kPad, SpecialToken::kBos, SpecialToken::kEos, SpecialToken::kPrompt,
                         SpecialToken::kExisting, SpecialToken::kScript}) {
    EXPECT_TRUE(t.is_special(t.special(s)));
  }
  EXPECT_EQ(t.special(SpecialToken::kPad), 0);
  for (int b = 0; b < 256; ++b) {
    TokenId id = t.byte_token(static_cast<uint8_t>(b));
    EXPECT_EQ(t.text(id), std::string(1, static_cast<char>(b)));
    EXPECT_EQ(t.find(std::string(1, static_cast<char>(b))), id);
  }
  for (TokenId id = 0; id < static_cast<TokenId>(t.size()); ++id) {
    if (!t.is_special(id)) {
      EXPECT_EQ(t.find(t.text(id)), id) << t.display(id);
    }
  }
}

TEST(Vocabulary, MalformedFilesAreUserErrors) {
  const std::string head = "version v\nspecial <|pad|>\nspecial <|bos|>\nspecial <|eos|>\nspecial <|prompt|>\n"
                           "special <|existing|>\nspecial <|script|>\nbytes 256\n";
  EXPECT_NO_THROW(Tokenizer::from_vocabulary_text(head + "token ab\\s\n"));
  EXPECT_EQ(Tokenizer::from_vocabulary_text(head + "token ab\\s\n").find("ab "), 262);
  EXPECT_THROW(Tokenizer::from_vocabulary_text(head + "token ab\ntoken ab\n"), UserError);   // duplicate
  EXPECT_THROW(Tokenizer::from_vocabulary_text(head + "token a\n"), UserError);              // one byte
  EXPECT_THROW(Tokenizer::from_vocabulary_text(head + "token 1a\n"), UserError);             // digit rule
  EXPECT_THROW(Tokenizer::from_vocabulary_text(head + "token a\\q\n"), UserError);           // escape
  EXPECT_THROW(Tokenizer::from_vocabulary_text(head + "word x\n"), UserError);               // keyword
  EXPECT_THROW(Tokenizer::from_vocabulary_text("special <|pad|>\nbytes 256\n"), UserError);  // no version
  EXPECT_THROW(Tokenizer::from_vocabulary_text("version v\nspecial <|pad|>\nbytes 256\n"), UserError);  // specials
}

}  // namespace
}  // namespace dragon::script
