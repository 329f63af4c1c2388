// The named corpora: deterministic, every spec rebuilds to its hash, distinct hashes,
// split rules (held-out families wholly held out, validation near its fraction), shards
// partition, each family of the issue present, every op kind in the full corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "corpus_test_util.h"
#include "dragon/data/corpus.h"
#include "dragon/ir/structural_hash.h"
#include "dragon/ops/op_registry.h"
#include "dragon/support/error.h"

namespace dragon::data {
namespace {

using testing::cached_corpus;

std::string op_kind(const std::string& spec) { return spec.substr(0, spec.find(':')); }

void expect_rebuilds(const Corpus& corpus, size_t stride) {
  for (size_t i = 0; i < corpus.entries.size(); i += stride) {
    const CorpusEntry& e = corpus.entries[i];
    const ops::Workload w = ops::OpRegistry::global().make_workload(e.spec);
    EXPECT_EQ(w.spec, e.spec) << "not canonical: " << e.origin;
    EXPECT_EQ(ir::structural_hash(w.func), e.hash) << e.spec;
    EXPECT_LE(workload_bytes(w.func), kMaxWorkloadBytes) << e.spec;
  }
}

void expect_distinct_hashes(const Corpus& corpus) {
  std::set<uint64_t> hashes;
  for (const CorpusEntry& e : corpus.entries) EXPECT_TRUE(hashes.insert(e.hash).second) << e.spec;
}

TEST(Corpus, NamesListSmokeModelsAndFull) {
  std::vector<std::string> names;
  for (const auto& [name, description] : corpus_names()) {
    names.push_back(name);
    EXPECT_FALSE(description.empty());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"smoke", "models", "full"}));
}

TEST(Corpus, UnknownNameListsTheCorpora) {
  try {
    build_corpus("no-such-corpus");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("smoke, models, full"), std::string::npos) << e.what();
  }
}

TEST(Corpus, SmokeIsTensOfSmallWorkloadsThatRebuild) {
  const Corpus& smoke = cached_corpus("smoke");
  EXPECT_GE(smoke.entries.size(), 20u);
  EXPECT_LE(smoke.entries.size(), 100u);
  expect_rebuilds(smoke, 1);
  expect_distinct_hashes(smoke);
  for (const CorpusEntry& e : smoke.entries) {
    const ops::Workload w = ops::OpRegistry::global().make_workload(e.spec);
    EXPECT_LE(workload_bytes(w.func), 1 << 20) << "not small: " << e.spec;
  }
}

TEST(Corpus, SmokeHeldOutFamilyWinsOverATrainingFamily) {
  // tiny_whisper's qkv_shared_with_gpt row repeats a tiny_gpt workload (m=8,n=96,k=32).
  const Corpus& smoke = cached_corpus("smoke");
  const ops::Workload shared = ops::OpRegistry::global().make_workload("matmul_bias_act:m=8,n=96,k=32,activation=none");
  const uint64_t hash = ir::structural_hash(shared.func);
  int found = 0;
  for (const CorpusEntry& e : smoke.entries) {
    if (e.hash != hash) continue;
    ++found;
    EXPECT_EQ(e.split, Split::kHeldOut);
    EXPECT_EQ(e.family, "tiny_whisper");
  }
  EXPECT_EQ(found, 1);
  std::map<Split, int> splits;
  for (const CorpusEntry& e : smoke.entries) ++splits[e.split];
  EXPECT_GT(splits[Split::kTrain], 0);
  EXPECT_GT(splits[Split::kValidation], 0);
  EXPECT_GT(splits[Split::kHeldOut], 0);
}

TEST(Corpus, TwoBuildsAreEqual) {
  CorpusOptions options;
  options.corpus_dir = std::string(DRAGON_SOURCE_DIR) + "/data/corpus";
  const Corpus again = build_corpus("models", options);
  const Corpus& first = cached_corpus("models");
  ASSERT_EQ(again.entries.size(), first.entries.size());
  for (size_t i = 0; i < again.entries.size(); ++i) {
    const CorpusEntry &a = again.entries[i], &b = first.entries[i];
    EXPECT_EQ(a.spec, b.spec);
    EXPECT_EQ(a.hash, b.hash);
    EXPECT_EQ(a.family, b.family);
    EXPECT_EQ(a.origin, b.origin);
    EXPECT_EQ(a.split, b.split);
  }
  EXPECT_EQ(again.stats.candidates, first.stats.candidates);
}

TEST(Corpus, ModelsHaveEveryFamilyOfTheIssue) {
  std::map<std::string, int> by_family;
  for (const CorpusEntry& e : cached_corpus("models").entries) ++by_family[e.family];
  for (const char* family : {"gpt2", "llama", "bert", "vit", "resnet", "mobilenet", "efficientnet", "unet", "whisper",
                             "dlrm", "dcnv2"}) {
    EXPECT_GE(by_family[family], 50) << family;
  }
  EXPECT_EQ(by_family.count("op-sweep"), 0u);
}

TEST(Corpus, ModelsRebuildAndAreDistinct) {
  const Corpus& models = cached_corpus("models");
  expect_distinct_hashes(models);
  expect_rebuilds(models, 7);
  EXPECT_GT(models.stats.duplicate_specs, 0);  // sweeps repeat layers: deduplicated, counted
  EXPECT_EQ(models.stats.rejected, 0);         // model files are checked data: nothing refused
}

void expect_split_rules(const Corpus& corpus) {
  const std::set<std::string> held_out_families = {"whisper", "efficientnet", "dcnv2"};
  int64_t validation = 0, not_held_out = 0;
  for (const CorpusEntry& e : corpus.entries) {
    const bool family_held_out = held_out_families.count(e.family) > 0;
    EXPECT_EQ(family_held_out, e.split == Split::kHeldOut) << e.family << " " << e.spec;
    if (e.split != Split::kHeldOut) {
      ++not_held_out;
      validation += e.split == Split::kValidation;
    }
  }
  ASSERT_GT(not_held_out, 1000);
  const double fraction = static_cast<double>(validation) / static_cast<double>(not_held_out);
  EXPECT_NEAR(fraction, 0.02, 0.006) << validation << " of " << not_held_out;
}

TEST(Corpus, ModelsSplitByFamilyAndHash) { expect_split_rules(cached_corpus("models")); }

TEST(Corpus, HeldOutWorkloadsAreNeverInTraining) {
  // Every workload a held-out family's files produce is held out, whoever produced it first:
  // rebuild whisper's attention at one size and find it held out.
  const ops::Workload w = ops::OpRegistry::global().make_workload(
      "scaled_dot_product_attention:batch=4,heads=6,seq_q=1500,seq_kv=1500,head_dim=64,causal=false,dtype=f16");
  const uint64_t hash = ir::structural_hash(w.func);
  bool found = false;
  for (const CorpusEntry& e : cached_corpus("models").entries) {
    if (e.hash != hash) continue;
    found = true;
    EXPECT_EQ(e.split, Split::kHeldOut);
  }
  EXPECT_TRUE(found);
}

TEST(Corpus, ShardsPartitionTheCorpus) {
  const Corpus& models = cached_corpus("models");
  for (int64_t count : {1, 3, 8}) {
    std::set<uint64_t> seen;
    size_t total = 0;
    for (int64_t index = 0; index < count; ++index) {
      const std::vector<CorpusEntry> shard = shard_of(models, index, count);
      total += shard.size();
      for (const CorpusEntry& e : shard) EXPECT_TRUE(seen.insert(e.hash).second);
      if (count > 1) {
        EXPECT_LT(shard.size(), models.entries.size() / count * 3 / 2);
      }
      // In hash order, so that the first workloads a cut-short build tunes mix the families
      // (the corpus lists them family by family).
      EXPECT_TRUE(std::is_sorted(shard.begin(), shard.end(),
                                 [](const CorpusEntry& a, const CorpusEntry& b) { return a.hash < b.hash; }));
      std::set<std::string> first_families;
      for (size_t k = 0; k < std::min<size_t>(32, shard.size()); ++k) first_families.insert(shard[k].family);
      EXPECT_GE(first_families.size(), 4u) << "shard " << index << " of " << count;
    }
    EXPECT_EQ(total, models.entries.size());
  }
  EXPECT_THROW(shard_of(models, 3, 3), UserError);
}

TEST(Corpus, FullHasAtLeast54000WorkloadsAndEveryOpKind) {
  const Corpus& full = cached_corpus("full");
  EXPECT_GE(full.entries.size(), 54000u);
  std::set<std::string> kinds;
  for (const CorpusEntry& e : full.entries) kinds.insert(op_kind(e.spec));
  for (const ops::OpKind& op : ops::OpRegistry::global().kinds()) EXPECT_TRUE(kinds.count(op.name)) << op.name;
  expect_distinct_hashes(full);
  expect_rebuilds(full, 101);
  expect_split_rules(full);
  EXPECT_GT(full.stats.rejected, 0);  // sampled combinations a builder refuses are counted, not fatal
}

}  // namespace
}  // namespace dragon::data
