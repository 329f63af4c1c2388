// Corpus files from a scratch folder: a small corpus built end to end, each malformed file
// a UserError naming FILE:LINE, and corpus_from_spec_file.
#include <gtest/gtest.h>

#include "corpus_test_util.h"
#include "dragon/data/corpus.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

using testing::ScratchDir;

const char* kSplits = "held_out\theld\twhy\nvalidation\t0.5\twhy\n";

const char* kGood =
    "# a comment\n"
    "family\ttoy\ta toy family\n"
    "sweep\tbatch\t1,2\n"
    "sweep\tdtype\tf32,f16\n"
    "model\ttoy-a\thidden=16\n"
    "model\ttoy-b\thidden=32\n"
    "let\trows\tbatch*4\n"
    "op\tup\tmatmul:m={rows},n={2*hidden},k={hidden},dtype={dtype}\n"
    "op\tnorm\tadd_layer_norm:rows={rows},dim={hidden},dtype={dtype}\n";

Corpus build_in(const ScratchDir& dir, const std::string& name = "models") {
  CorpusOptions options;
  options.corpus_dir = dir.path().string();
  return build_corpus(name, options);
}

// Builds a "models" corpus whose one model file is `text`; returns the error message.
std::string error_of(const std::string& text) {
  ScratchDir dir("corpus-bad");
  dir.write("splits.tsv", kSplits);
  dir.write("models/bad.tsv", text);
  try {
    build_in(dir);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_error(const std::string& text, const std::string& where, const std::string& why) {
  const std::string message = error_of(text);
  EXPECT_NE(message.find(where), std::string::npos) << message;
  EXPECT_NE(message.find(why), std::string::npos) << message;
}

TEST(CorpusFiles, ExpandsModelsTimesSweepsTimesOps) {
  ScratchDir dir("corpus-good");
  dir.write("splits.tsv", kSplits);
  dir.write("models/toy.tsv", kGood);
  const Corpus corpus = build_in(dir);
  EXPECT_EQ(corpus.stats.candidates, 2 * 2 * 2 * 2);
  ASSERT_EQ(corpus.entries.size(), 16u);
  EXPECT_EQ(corpus.entries[0].spec, "matmul:m=4,n=32,k=16,trans_a=false,trans_b=false,dtype=f32");
  EXPECT_EQ(corpus.entries[0].origin, "toy-a batch=1 dtype=f32 up");
  EXPECT_EQ(corpus.entries[0].family, "toy");
  EXPECT_EQ(corpus.entries[1].spec.rfind("add_layer_norm:rows=4,dim=16,", 0), 0u) << corpus.entries[1].spec;
}

TEST(CorpusFiles, SameSpecTwiceIsOneEntry) {
  ScratchDir dir("corpus-dup");
  dir.write("splits.tsv", kSplits);
  dir.write("models/toy.tsv", std::string(kGood) + "op\tup_again\tmatmul:m={rows},n={2*hidden},k={hidden},dtype={dtype}\n");
  const Corpus corpus = build_in(dir);
  EXPECT_EQ(corpus.entries.size(), 16u);
  EXPECT_EQ(corpus.stats.duplicate_specs, 8);
}

TEST(CorpusFiles, HeldOutFamilyTakesOverASharedWorkload) {
  ScratchDir dir("corpus-held");
  dir.write("splits.tsv", kSplits);
  dir.write("models/a_toy.tsv", kGood);
  dir.write("models/b_held.tsv",
            "family\theld\tx\nmodel\th\tx=1\nop\tsame\tmatmul:m=4,n=32,k=16,dtype=f32\n");
  const Corpus corpus = build_in(dir);
  ASSERT_EQ(corpus.entries.size(), 16u);
  EXPECT_EQ(corpus.entries[0].split, Split::kHeldOut);
  EXPECT_EQ(corpus.entries[0].family, "held");
  EXPECT_EQ(corpus.entries[0].origin, "h same");
  for (size_t i = 1; i < corpus.entries.size(); ++i) EXPECT_NE(corpus.entries[i].split, Split::kHeldOut);
}

TEST(CorpusFiles, BadRowWidth) {
  expect_error("family\ttoy\tx\nmodel\ta\n", "models/bad.tsv:2:", "expected 3 tab-separated fields");
}

TEST(CorpusFiles, UnknownVariableInATemplate) {
  expect_error("model\ta\thidden=8\nop\tup\tmatmul:m={hiden},n=4,k=4\n", "models/bad.tsv:2:", "unknown variable 'hiden'");
}

TEST(CorpusFiles, OpSpecThatDoesNotParseNamesTheRow) {
  expect_error("model\ta\thidden=8\n\nop\tup\tmatmul:m={hidden},n=4,kk=4\n", "models/bad.tsv:3:",
               "op row 'up'");
  expect_error("model\ta\thidden=8\nop\tup\tmatmull:m={hidden}\n", "models/bad.tsv:2:", "unknown op 'matmull'");
}

TEST(CorpusFiles, ModelMissingAVariableNamesTheModelRow) {
  expect_error("model\ta\thidden=8\nmodel\tb\theads=2\nop\tup\tmatmul:m={hidden},n=4,k=4\n", "models/bad.tsv:2:",
               "model 'b' does not define 'hidden'");
}

TEST(CorpusFiles, BuilderRefusalInAModelFileIsAnError) {
  // groups=3 does not divide 8 channels: the builder refuses the second sweep point.
  expect_error("sweep\tg\t1,3\nmodel\ta\tc=8\nop\tconv\tconv2d:in_channels={c},out_channels={c},groups={g}\n",
               "models/bad.tsv:3:", "a g=3 conv");
}

TEST(CorpusFiles, OtherMalformedRows) {
  expect_error("model\ta\thidden\nop\tup\tmatmul\n", "models/bad.tsv:1:", "expected name=value");
  expect_error("model\ta\tx=1\nrow\tup\tmatmul\n", "models/bad.tsv:2:", "unknown row kind 'row'");
  expect_error("sweep\tx\t1\nmodel\ta\tx=1\nop\tup\tmatmul\n", "models/bad.tsv:2:", "which is swept");
  expect_error("model\ta\tx=f16\nop\tup\tmatmul:m={2*x}\n", "models/bad.tsv:2:", "not a number");
  expect_error("model\ta\tx=1\nmodel\ta\tx=2\nop\tup\tmatmul\n", "models/bad.tsv:2:", "defined twice");
}

TEST(CorpusFiles, BadSplitsAndSweepFiles) {
  ScratchDir dir("corpus-splits");
  dir.write("models/toy.tsv", kGood);
  dir.write("splits.tsv", "held_out\tx\twhy\nvalidation\t1.5\twhy\n");
  try {
    build_in(dir);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("splits.tsv:2:"), std::string::npos) << e.what();
  }
  dir.write("splits.tsv", kSplits);
  dir.write("op_sweep.tsv", "setting\tsamples_per_kind\t3\nsetting\tseed\t1\nlog\tm\t0,8\n");
  try {
    build_in(dir, "full");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("op_sweep.tsv:3:"), std::string::npos) << e.what();
  }
}

TEST(CorpusFiles, SmallOpSweepCoversEveryKindAndCountsRefusals) {
  ScratchDir dir("corpus-sweep");
  dir.write("splits.tsv", kSplits);
  dir.write("models/toy.tsv", kGood);
  dir.write("op_sweep.tsv", "setting\tsamples_per_kind\t4\nsetting\tseed\t7\nint\tgroups\t1,3\n");
  const Corpus a = build_in(dir, "full");
  const Corpus b = build_in(dir, "full");
  ASSERT_EQ(a.entries.size(), b.entries.size());
  for (size_t i = 0; i < a.entries.size(); ++i) EXPECT_EQ(a.entries[i].spec, b.entries[i].spec);
  EXPECT_EQ(a.stats.candidates, 16 + 4 * static_cast<int64_t>(ops::OpRegistry::global().kinds().size()));
  EXPECT_EQ(a.stats.candidates, static_cast<int64_t>(a.entries.size()) + a.stats.duplicate_specs +
                                    a.stats.duplicate_hashes + a.stats.rejected + a.stats.over_size_cap +
                                    a.stats.internal_errors);
}

TEST(CorpusFiles, SpecFileIsACorpusOfItsLines) {
  ScratchDir dir("corpus-specs");
  const std::string path = dir.write("specs.txt",
                                     "# mine\nmatmul:m=8,n=8,k=8\n\nmatmul:m=8,n=8,k=8,dtype=f32  # same\nrelu:shape=4x4\n");
  const Corpus corpus = build_corpus(path);
  ASSERT_EQ(corpus.entries.size(), 2u);
  EXPECT_EQ(corpus.entries[0].origin, path + ":2");
  EXPECT_EQ(corpus.entries[1].family, "file");
  EXPECT_EQ(corpus.entries[1].split, Split::kTrain);
  dir.write("specs.txt", "relu:shape=4x4\nrelu:shape=4x0\n");
  try {
    corpus_from_spec_file(path);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ":2:", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace dragon::data
