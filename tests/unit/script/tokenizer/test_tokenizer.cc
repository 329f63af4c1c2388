// Tokenizer tests: lossless encoding of IR text, scripts and arbitrary bytes, the
// whole-number rule, common values as single tokens, and example framing.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "dragon/ir/printer.h"
#include "dragon/ops/op_registry.h"
#include "dragon/script/tokenizer.h"
#include "dragon/support/error.h"

namespace dragon::script {
namespace {

const Tokenizer& tok() { return Tokenizer::standard(); }

std::vector<std::string> texts_of(const std::vector<TokenId>& ids) {
  std::vector<std::string> out;
  for (TokenId id : ids) out.emplace_back(tok().text(id));
  return out;
}

TEST(Tokenizer, EveryOperatorPromptRoundTrips) {
  const auto& registry = ops::OpRegistry::global();
  int count = 0;
  for (const auto& kind : registry.kinds()) {
    const std::string text = ir::print_function(registry.make_workload(kind.name).func);
    const std::vector<TokenId> ids = tok().encode(text);
    EXPECT_EQ(tok().decode(ids), text) << kind.name;
    // Far fewer tokens than bytes: the vocabulary covers the IR's spelling.
    EXPECT_LT(ids.size() * 5, text.size() * 2) << kind.name << ": " << ids.size() << " tokens for " << text.size();
    ++count;
  }
  EXPECT_GE(count, 60);
}

TEST(Tokenizer, RandomBytesRoundTrip) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::string text(rng() % 64, '\0');
    // Mixed alphabets: raw bytes, and digit/letter soup that stresses the number rule.
    const char* soup = "0123456789lbv_ ,[]\n";
    for (char& c : text) c = trial % 2 ? static_cast<char>(rng()) : soup[rng() % 19];
    EXPECT_EQ(tok().decode(tok().encode(text)), text);
  }
}

TEST(Tokenizer, NumbersAreWholeTokensOrDigits) {
  EXPECT_EQ(texts_of(tok().encode("1024")), std::vector<std::string>({"1024"}));
  EXPECT_EQ(texts_of(tok().encode("64")), std::vector<std::string>({"64"}));
  EXPECT_EQ(texts_of(tok().encode("1025")), std::vector<std::string>({"1", "0", "2", "5"}));
  EXPECT_EQ(texts_of(tok().encode("-3")), std::vector<std::string>({"-", "3"}));
  // Every integer up to 512 and the powers of two are one token.
  for (int v = 0; v <= 512; ++v) EXPECT_EQ(tok().encode(std::to_string(v)).size(), 1u) << v;
  for (int64_t v = 1; v <= (1 << 24); v *= 2) EXPECT_EQ(tok().encode(std::to_string(v)).size(), 1u) << v;
  // Any integer is representable: 19 digits of int64 come back.
  EXPECT_EQ(tok().decode(tok().encode("9223372036854775807")), "9223372036854775807");
}

TEST(Tokenizer, TokensNeverEndInsideADigitRun) {
  // "l30" is a token but must not match at the start of "l300": l, then 300 (a number).
  EXPECT_EQ(texts_of(tok().encode("l300")), std::vector<std::string>({"l", "300"}));
  EXPECT_EQ(texts_of(tok().encode("l12 ")), std::vector<std::string>({"l12", " "}));
  EXPECT_EQ(texts_of(tok().encode("vi0")), std::vector<std::string>({"vi0"}));
}

TEST(Tokenizer, IdentifiersComposeFromWords) {
  EXPECT_EQ(texts_of(tok().encode("x_max")), std::vector<std::string>({"x", "_max"}));
  EXPECT_EQ(texts_of(tok().encode("threadIdx.x")), std::vector<std::string>({"threadIdx.x"}));
  // An unknown identifier falls back to pieces and bytes, still lossless.
  EXPECT_EQ(tok().decode(tok().encode("zq_Qw7")), "zq_Qw7");
}

TEST(Tokenizer, IndentedLinesStartWithOneToken) {
  std::vector<std::string> pieces = texts_of(tok().encode("{\n      for i0 in 16 {"));
  EXPECT_EQ(pieces, std::vector<std::string>({"{", "\n      ", "for ", "i0", " in ", "16", " {"}));
}

TEST(Tokenizer, ExamplesFrameAndUnframe) {
  Example construction{"func f() {}\n", std::nullopt, "b0 = gb \"C\"\n"};
  std::vector<TokenId> ids = tok().encode_example(construction);
  EXPECT_EQ(ids.front(), tok().special(SpecialToken::kBos));
  EXPECT_EQ(ids.back(), tok().special(SpecialToken::kEos));
  EXPECT_EQ(tok().decode_example(ids), construction);

  Example refinement{"func f() {}\n", "old\n", "new\n"};
  EXPECT_EQ(tok().decode_example(tok().encode_example(refinement)), refinement);

  Example prompt_only{"func f() {}\n", std::nullopt, std::nullopt};
  ids = tok().encode_example(prompt_only);
  EXPECT_EQ(ids.back(), tok().special(SpecialToken::kScript));
  EXPECT_EQ(tok().decode_example(ids), prompt_only);
}

TEST(Tokenizer, MalformedInputIsAUserError) {
  std::vector<TokenId> with_special = {tok().byte_token('a'), tok().special(SpecialToken::kEos)};
  EXPECT_THROW(tok().decode(with_special), UserError);
  std::vector<TokenId> out_of_range = {static_cast<TokenId>(tok().size())};
  EXPECT_THROW(tok().decode(out_of_range), UserError);
  std::vector<TokenId> no_frame = tok().encode("abc");
  EXPECT_THROW(tok().decode_example(no_frame), UserError);
  std::vector<TokenId> no_eos = {tok().special(SpecialToken::kBos), tok().special(SpecialToken::kPrompt),
                                 tok().byte_token('a'), tok().special(SpecialToken::kScript), tok().byte_token('b')};
  EXPECT_THROW(tok().decode_example(no_eos), UserError);
}

}  // namespace
}  // namespace dragon::script
