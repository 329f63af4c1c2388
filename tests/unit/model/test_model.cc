// The little dragon's libtorch parts on the CPU, in seconds: shapes, causal masking, rotary
// positions, the loss and its gradients against independent computations, AdamW against
// libtorch's, overfitting real workloads' scripts to exact match, checkpoints bit-exact
// and a resumed run equal to an uninterrupted one, sampling and the script constraint,
// and the overfit model through propose() and `dragon optimize`.
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "checkpoint.h"
#include "dragon/data/data_set_reader.h"
#include "dragon/db/database.h"
#include "dragon/model/lr_schedule.h"
#include "dragon/model/propose.h"
#include "dragon/model/tensor_file.h"
#include "dragon/model/script_constraint.h"
#include "dragon/model/sft.h"
#include "dragon/ops/op_registry.h"
#include "dragon/runtime/cuda_driver.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/schedule.h"
#include "dragon/schedule/trace.h"
#include "dragon/script/script.h"
#include "dragon/search/auto_bind.h"
#include "dragon/support/file.h"
#include "sampling.h"
#include "training.h"

namespace dragon::model {
namespace {

namespace fs = std::filesystem;
using script::TokenId;

const script::Tokenizer& tok() { return script::Tokenizer::standard(); }

ModelConfig micro_config() {
  ModelConfig c;
  c.vocab = 23, c.d_model = 16, c.layers = 2, c.heads = 2, c.ffn = 24, c.context = 16;
  return c;
}

// (prompt, script) pairs from real workloads: the default schedule (MetaSchedule's
// AutoBind, as the suites run it) of four op kinds and two of the hand-written expert
// scripts, prompts as op specs.
std::vector<SftRecord> real_records() {
  std::vector<SftRecord> out;
  for (const char* spec : {"relu", "softmax:shape=16x1024", "layer_norm", "matmul:m=128,n=128,k=128"}) {
    schedule::Schedule sch(ops::OpRegistry::global().make_workload(spec).func);
    search::auto_bind(sch);
    SftRecord r;
    r.prompt = PromptForm::kSpec;
    r.workload = spec;
    r.script = script::encode(sch.trace());
    out.push_back(r);
  }
  for (auto [file, spec] : {std::pair{"gemm_cpu.script", "matmul:m=64,n=64,k=64"}, {"sum_rfactor.script", "sum"}}) {
    SftRecord r;
    r.prompt = PromptForm::kSpec;
    r.workload = spec;
    std::string path = DRAGON_SOURCE_DIR;
    path.append("/data/scripts/expert/").append(file);
    r.script = read_text_file(path);
    out.push_back(r);
  }
  return out;
}

std::vector<TokenizedExample> tokenized(const std::vector<SftRecord>& records) {
  std::vector<TokenizedExample> out;
  for (const SftRecord& r : records) out.push_back(tokenize(tok(), to_example(r)));
  return out;
}

Batch batch_of(const std::vector<TokenizedExample>& examples) {
  std::vector<const TokenizedExample*> pointers;
  for (const TokenizedExample& e : examples) pointers.push_back(&e);
  return make_batch(pointers, tok().special(script::SpecialToken::kPad), torch::kCPU);
}

std::vector<std::pair<std::string, torch::Tensor>> named_parameters(Transformer& model) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (auto& p : model->named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

TEST(Transformer, ShapesAndParameterCount) {
  const ModelConfig c = ModelConfig::preset("tiny", static_cast<int64_t>(tok().size()));
  Transformer model(c, 1);
  torch::Tensor ids = torch::randint(0, c.vocab, {3, 11}, torch::kInt64);
  EXPECT_EQ(model->forward(ids).sizes().vec(), (std::vector<int64_t>{3, 11, c.vocab}));
  int64_t n = 0;
  for (const auto& p : model->parameters()) n += p.numel();
  EXPECT_EQ(n, c.parameter_count());
  EXPECT_EQ(model->named_parameters().size(), static_cast<size_t>(1 + c.layers * 7 + 1))
      << "embedding, 7 per block, final norm";
  // The same seed draws the same weights.
  Transformer again(c, 1), other(c, 2);
  EXPECT_TRUE(torch::equal(again->forward(ids), model->forward(ids)));
  EXPECT_FALSE(torch::equal(other->forward(ids), model->forward(ids)));
}

TEST(Transformer, FutureTokensDoNotChangePastLogits) {
  const ModelConfig c = micro_config();
  Transformer model(c, 3);
  torch::Tensor ids = torch::randint(0, c.vocab, {2, 12}, torch::kInt64);
  torch::Tensor changed = ids.clone();
  changed.index_put_({torch::indexing::Slice(), 7}, (ids.index({torch::indexing::Slice(), 7}) + 5) % c.vocab);
  torch::Tensor a = model->forward(ids), b = model->forward(changed);
  using torch::indexing::Slice;
  EXPECT_TRUE(torch::allclose(a.index({Slice(), Slice(0, 7)}), b.index({Slice(), Slice(0, 7)}), 0, 1e-6))
      << "positions 0..6 must not see token 7";
  EXPECT_FALSE(torch::allclose(a.index({Slice(), Slice(7)}), b.index({Slice(), Slice(7)}), 0, 1e-3))
      << "positions 7.. must see it";
}

// Incremental decoding: a sequence fed in pieces through a key/value cache (a prompt of
// several tokens, then one at a time, then several again) gives the logits of feeding it
// whole, and the cache ends up holding every position.
TEST(Transformer, CachedPiecesEqualTheWholeSequence) {
  const ModelConfig c = micro_config();
  Transformer model(c, 5);
  torch::NoGradGuard no_grad;
  torch::Tensor ids = torch::randint(0, c.vocab, {2, 13}, torch::kInt64);
  const torch::Tensor whole = model->forward(ids);  // (2, 13, V)
  KeyValueCache cache;
  std::vector<torch::Tensor> pieces;
  using torch::indexing::Slice;
  for (auto [from, to] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {5, 6}, {6, 7}, {7, 10}, {10, 13}}) {
    pieces.push_back(model->forward(ids.index({Slice(), Slice(from, to)}), cache));
    EXPECT_EQ(cache.length(), to);
  }
  EXPECT_TRUE(torch::allclose(torch::cat(pieces, 1), whole, 1e-5, 1e-5));
  ASSERT_EQ(cache.keys.size(), static_cast<size_t>(c.layers));
  EXPECT_EQ(cache.keys[0].sizes().vec(), (std::vector<int64_t>{2, c.heads, 13, c.head_dim()}));
  torch::Tensor more = torch::randint(0, c.vocab, {2, c.context - 12}, torch::kInt64);
  EXPECT_THROW(model->forward(more, cache), std::exception) << "13 cached + the rest overflow the context";
}

// The same through a cache with a capacity, as sampling decodes: the first piece reserves
// (B, H, capacity, D) per layer and each piece writes its positions in place, attention
// reading the written ones through a strided view. The logits are still the whole
// sequence's, in float32 and with bf16 products; a piece past the capacity is refused
// before it writes, and the cache goes on from where it was.
TEST(Transformer, CachedPiecesInPlaceEqualTheWholeSequence) {
  const ModelConfig c = micro_config();
  Transformer model(c, 5);
  torch::NoGradGuard no_grad;
  torch::Tensor ids = torch::randint(0, c.vocab, {2, 14}, torch::kInt64);
  using torch::indexing::Slice;
  for (const torch::ScalarType type : {torch::kFloat32, torch::kBFloat16}) {
    SCOPED_TRACE(c10::toString(type));
    model->set_compute_type(type);
    const torch::Tensor whole = model->forward(ids);  // (2, 14, V)
    KeyValueCache cache;
    cache.capacity = 14;  // under the context (16): the capacity is what refuses
    std::vector<torch::Tensor> pieces;
    for (auto [from, to] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {5, 6}, {6, 7}, {7, 10}, {10, 13}}) {
      pieces.push_back(model->forward(ids.index({Slice(), Slice(from, to)}), cache));
      EXPECT_EQ(cache.length(), to);
    }
    ASSERT_EQ(cache.keys.size(), static_cast<size_t>(c.layers));
    EXPECT_EQ(cache.keys[0].sizes().vec(), (std::vector<int64_t>{2, c.heads, 14, c.head_dim()}));
    EXPECT_EQ(cache.values[0].sizes().vec(), (std::vector<int64_t>{2, c.heads, 14, c.head_dim()}));
    EXPECT_EQ(cache.keys[0].scalar_type(), type);
    torch::Tensor two = torch::randint(0, c.vocab, {2, 2}, torch::kInt64);
    EXPECT_THROW(model->forward(two, cache), Error) << "13 cached + 2 overflow the capacity 14";
    EXPECT_EQ(cache.length(), 13);
    pieces.push_back(model->forward(ids.index({Slice(), Slice(13, 14)}), cache));
    EXPECT_EQ(cache.length(), 14);
    if (type == torch::kFloat32) {
      EXPECT_TRUE(torch::allclose(torch::cat(pieces, 1), whole, 1e-5, 1e-5));
    } else {
      const double scale = whole.abs().max().item<double>();
      EXPECT_TRUE(torch::allclose(torch::cat(pieces, 1), whole, 0, 0.02 * scale));
    }
  }
}

// Mixed precision: with bf16 products the logits stay float32 and near float32's (bf16
// keeps 8 bits of mantissa), the cache holds bf16 and pieces still equal the whole, the
// parameters stay float32 and receive float32 gradients, and one step lowers the loss.
TEST(Transformer, Bf16ProductsStayNearFloat32AndTrain) {
  const ModelConfig c = micro_config();
  Transformer model(c, 7);
  torch::Tensor ids = torch::randint(0, c.vocab, {2, 13}, torch::kInt64);
  torch::Tensor exact, mixed;
  {
    torch::NoGradGuard no_grad;
    exact = model->forward(ids);
    model->set_compute_type(torch::kBFloat16);
    mixed = model->forward(ids);
  }
  EXPECT_EQ(model->compute_type(), torch::kBFloat16);
  EXPECT_EQ(mixed.scalar_type(), torch::kFloat32);
  const double scale = exact.abs().max().item<double>();
  EXPECT_LT((mixed - exact).abs().max().item<double>(), 0.05 * scale);
  EXPECT_GT((mixed - exact).abs().max().item<double>(), 0.0) << "the products did run in bf16";
  {
    torch::NoGradGuard no_grad;
    KeyValueCache cache;
    using torch::indexing::Slice;
    torch::Tensor first = model->forward(ids.index({Slice(), Slice(0, 6)}), cache);
    torch::Tensor rest = model->forward(ids.index({Slice(), Slice(6, 13)}), cache);
    EXPECT_EQ(cache.keys[0].scalar_type(), torch::kBFloat16);
    EXPECT_TRUE(torch::allclose(torch::cat({first, rest}, 1), mixed, 0, 0.02 * scale));
  }
  EXPECT_THROW(model->set_compute_type(torch::kFloat16), Error);

  std::vector<TokenizedExample> examples(2);
  for (TokenizedExample& e : examples) {
    for (int64_t i = 0; i < 12; ++i) e.tokens.push_back(static_cast<TokenId>(torch::randint(0, c.vocab, {1}).item<int64_t>()));
    e.script_start = 4;
  }
  const Batch batch = batch_of(examples);
  AdamW optimizer(named_parameters(model), AdamW::Settings{});
  const double before = sft_loss(model, batch).item<double>();
  for (int i = 0; i < 3; ++i) train_step(model, optimizer, batch, 1e-2, 1.0);
  for (const auto& p : model->parameters()) {
    EXPECT_EQ(p.scalar_type(), torch::kFloat32);
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().scalar_type(), torch::kFloat32);
  }
  EXPECT_LT(sft_loss(model, batch).item<double>(), before);
}

// A step's work: 6 per parameter per token and 6 x layers x d_model per visible pair of
// causal attention, padding left out.
TEST(Training, FlopsCountTokensAndCausalPairsWithoutPadding) {
  const ModelConfig c = micro_config();
  TokenizedExample a, b;
  a.tokens = {1, 2, 3, 4, 5};  // 4 positions read
  a.script_start = 2;
  b.tokens = {1, 2, 3};  // 2
  b.script_start = 1;
  const std::vector<const TokenizedExample*> both = {&a, &b};
  const Batch batch = make_batch(both, tok().special(script::SpecialToken::kPad), torch::kCPU);
  EXPECT_EQ(batch.tokens, 6);
  EXPECT_EQ(batch.squared_lengths, 16 + 4);
  const double pairs = (4 * 5 / 2) + (2 * 3 / 2);  // query i sees i + 1 keys
  EXPECT_DOUBLE_EQ(training_flops(c, batch),
                   6.0 * static_cast<double>(c.parameter_count()) * 6 + 12.0 * static_cast<double>(c.layers * c.d_model) * pairs);
}

TEST(Transformer, RotaryScoresDependOnRelativePositionOnly) {
  const int64_t D = 8;
  auto [cos, sin] = rotary_tables(16, D, 10000.0);
  torch::manual_seed(0);
  torch::Tensor q = torch::randn({D}), k = torch::randn({D});
  auto at = [&](const torch::Tensor& v, int64_t pos) {
    // One vector placed at position pos of a (1, 1, T, D) tensor.
    torch::Tensor x = torch::zeros({1, 1, 16, D});
    x.index_put_({0, 0, pos}, v);
    return apply_rotary(x, cos, sin).index({0, 0, pos});
  };
  const double d31 = torch::dot(at(q, 3), at(k, 1)).item<double>();
  const double d75 = torch::dot(at(q, 7), at(k, 5)).item<double>();
  const double d72 = torch::dot(at(q, 7), at(k, 2)).item<double>();
  EXPECT_NEAR(d31, d75, 1e-5);
  EXPECT_GT(std::abs(d31 - d72), 1e-3) << "another distance, another score";
  EXPECT_NEAR(at(q, 9).norm().item<double>(), q.norm().item<double>(), 1e-5) << "a rotation keeps the norm";
  EXPECT_TRUE(torch::allclose(at(q, 0), q)) << "position 0 is not turned";
}

// The masked loss against log-softmax written out, and its gradients against central
// differences, in double precision.
TEST(Training, LossAndGradientsMatchIndependentComputations) {
  const ModelConfig c = micro_config();
  Transformer model(c, 5);
  model->to(torch::kFloat64);
  std::vector<TokenizedExample> examples = {{{1, 4, 9, 2, 7, 7, 3, 12}, 4}, {{1, 5, 6, 2, 11, 3}, 3}};
  Batch batch = make_batch(std::vector<const TokenizedExample*>{&examples[0], &examples[1]}, 0, torch::kCPU);
  EXPECT_EQ(batch.target_tokens, (8 - 4) + (6 - 3));
  EXPECT_EQ(batch.tokens, 7 + 5);
  torch::Tensor loss = sft_loss(model, batch);
  {
    torch::NoGradGuard no_grad;
    torch::Tensor logp = torch::log_softmax(model->forward(batch.inputs), -1);  // (B, T, V)
    double sum = 0;
    int64_t n = 0;
    for (size_t b = 0; b < examples.size(); ++b) {
      const auto& t = examples[b].tokens;
      for (size_t i = examples[b].script_start; i < t.size(); ++i, ++n) {
        sum -= logp[b][static_cast<int64_t>(i) - 1][t[i]].item<double>();
      }
    }
    EXPECT_NEAR(loss.item<double>(), sum / static_cast<double>(n), 1e-12);
  }
  loss.backward();
  const double h = 1e-6;
  int checked = 0;
  for (auto& named : model->named_parameters()) {
    torch::Tensor p = named.value();
    torch::Tensor grad = p.grad().reshape({-1});
    torch::Tensor flat = p.data().view({-1});
    for (int64_t i : {int64_t{0}, flat.numel() / 2, flat.numel() - 1}) {
      torch::NoGradGuard no_grad;
      const double original = flat[i].item<double>();
      flat[i] = original + h;
      const double plus = sft_loss(model, batch).item<double>();
      flat[i] = original - h;
      const double minus = sft_loss(model, batch).item<double>();
      flat[i] = original;
      const double numeric = (plus - minus) / (2 * h), analytic = grad[i].item<double>();
      EXPECT_NEAR(analytic, numeric, 1e-6 + 1e-5 * std::abs(numeric)) << named.key() << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3 * (1 + 2 * 7 + 1));
}

TEST(Training, PromptTokensCarryNoLoss) {
  std::vector<TokenizedExample> one = {{{1, 4, 9, 2, 7, 3}, 4}};
  Batch batch = make_batch(std::vector<const TokenizedExample*>{&one[0]}, 0, torch::kCPU);
  EXPECT_EQ(batch.targets.sizes().vec(), (std::vector<int64_t>{1, 5}));
  const std::vector<int64_t> expected = {kIgnoredTarget, kIgnoredTarget, kIgnoredTarget, 7, 3};
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(batch.targets[0][i].item<int64_t>(), expected[i]) << i;
}

TEST(Training, AdamWMatchesLibtorchAdamW) {
  const ModelConfig c = micro_config();
  Transformer ours(c, 7), theirs(c, 7);
  std::vector<TokenizedExample> examples = {{{1, 4, 9, 2, 7, 7, 3, 12}, 2}};
  Batch batch = make_batch(std::vector<const TokenizedExample*>{&examples[0]}, 0, torch::kCPU);
  AdamW mine(named_parameters(ours), AdamW::Settings{.beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1});
  for (auto& s : mine.state()) s.decay = true;  // libtorch decays every parameter
  torch::optim::AdamW reference(theirs->parameters(),
                                torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
  for (int step = 0; step < 3; ++step) {
    mine.zero_grad();
    sft_loss(ours, batch).backward();
    mine.step(1e-2);
    reference.zero_grad();
    sft_loss(theirs, batch).backward();
    reference.step();
  }
  auto a = ours->parameters(), b = theirs->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-6, 1e-7)) << i;
  EXPECT_FALSE(torch::equal(a[0], Transformer(c, 7)->parameters()[0])) << "the weights moved";
}

// A tiny model learns six real (workload, script) pairs until greedy decoding writes each
// script exactly, with and without the constrained decoder.
TEST(Training, TinyModelOverfitsRealScriptsToExactMatch) {
  const std::vector<SftRecord> records = real_records();
  const std::vector<TokenizedExample> examples = tokenized(records);
  // Smaller than the tiny preset: on the CPU most of a step is the output head (V = 2653).
  ModelConfig c;
  c.vocab = static_cast<int64_t>(tok().size()), c.d_model = 48, c.layers = 2, c.heads = 4, c.ffn = 128, c.context = 384;
  size_t longest = 0;
  for (const TokenizedExample& e : examples) longest = std::max(longest, e.tokens.size());
  ASSERT_LE(static_cast<int64_t>(longest), c.context);
  at::globalContext().setFlushDenormal(true);  // as train_sft does on the CPU
  Transformer model(c, 11);
  AdamW optimizer(named_parameters(model), AdamW::Settings{.weight_decay = 0.0});
  const LrSchedule schedule{.peak = 1e-2, .floor_ratio = 0.1, .warmup = 5, .total = 200};
  Batch batch = batch_of(examples);
  const TokenId pad = tok().special(script::SpecialToken::kPad);
  const auto start = std::chrono::steady_clock::now();
  int64_t step = 0;
  double first_loss = 0, loss = 0;
  for (; step < 300; ++step) {
    loss = train_step(model, optimizer, batch, schedule.at(step), 1.0).loss;
    if (step == 0) first_loss = loss;
    if (step % 5 == 4 && evaluate(model, examples, 8, pad).exact_match == 1.0) break;
  }
  const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(evaluate(model, examples, 8, pad).exact_match, 1.0) << "after " << step << " steps, loss " << loss;
  EXPECT_LT(loss, first_loss / 10);
  std::printf("overfit: %zu examples of up to %zu tokens (%lld target tokens), exact match after %lld steps, loss "
              "%.3f -> %.4f, %.1f s\n",
              examples.size(), longest, static_cast<long long>(batch.target_tokens), static_cast<long long>(step + 1),
              first_loss, loss, train_seconds);
  const TokenId eos = tok().special(script::SpecialToken::kEos);
  for (size_t i = 0; i < records.size(); ++i) {
    const TokenizedExample& e = examples[i];
    std::span<const TokenId> prompt(e.tokens.data(), e.script_start);
    Generation unconstrained = generate(model, prompt, eos, SamplingSettings{.temperature = 0}, nullptr);
    EXPECT_EQ(unconstrained.stop, Generation::Stop::kEos) << records[i].workload;
    EXPECT_EQ(tok().decode(unconstrained.tokens), records[i].script) << records[i].workload;
    ScriptConstraint constraint(tok(), ops::OpRegistry::global().make_workload(records[i].workload).func);
    Generation constrained = generate(model, prompt, eos, SamplingSettings{.temperature = 0}, &constraint);
    EXPECT_EQ(tok().decode(constrained.tokens), records[i].script) << records[i].workload;
  }
  std::printf("overfit: greedy generation of the %zu scripts, free and constrained, %.1f s\n", records.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - train_seconds);

  // The same model on the product's path: written to disk, asked by propose() and by
  // `dragon optimize` (dragon-model as a child, the CPU measurer, the tuning database) for
  // the expert CPU GEMM's script, which replays, verifies and is timed.
  const SftRecord& gemm = records[4];
  ASSERT_EQ(gemm.workload, "matmul:m=64,n=64,k=64");
  const fs::path root = fs::temp_directory_path() / "dragon_test_optimize";
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string weights = (root / "model.safetensors").string();
  // Trained on spec prompts, as its metadata says: propose and optimize frame prompts so
  // without being told.
  write_tensor_file(weights, checkpoint_tensors(model, StorageType::kF32, nullptr, std::nullopt, {{"prompt", "spec"}}));
  const std::vector<Proposal> proposals = propose(ProposeRequest{.model_path = weights,
                                                                 .workload = gemm.workload,
                                                                 .attempts = 2,
                                                                 .temperature = 0,
                                                                 .device = "cpu"});
  ASSERT_EQ(proposals.size(), 2u);
  for (const Proposal& p : proposals) {
    EXPECT_EQ(p.script, gemm.script) << "attempt " << p.attempt;
    EXPECT_EQ(p.stop, "eos");
  }
  const std::string db_path = (root / "tune.db").string();
  const std::string log_path = (root / "optimize.log").string();
  const std::string command = std::string(DRAGON_BINARY_DIR) + "/dragon optimize '" + gemm.workload + "' --model " +
                              weights + " --attempts 2 --temperature 0 --target cpu --db " + db_path +
                              " > " + log_path + " 2>&1";
  const int status = std::system(command.c_str());
  const std::string log = read_text_file(log_path);
  ASSERT_EQ(status, 0) << log;
  EXPECT_NE(log.find("2 of 2 attempts replayed, 2 verified and timed"), std::string::npos) << log;
  EXPECT_NE(log.find(gemm.script), std::string::npos) << log;
  db::Database database = db::Database::open(db_path, {.read_only = true});
  EXPECT_GE(database.count({.origin = "model"}), 1) << "the model's attempts are stored";
  EXPECT_EQ(database.count({.origin = "default"}), 1) << "beside the default schedule";
  for (const db::StoredRecord& r : database.records({.origin = "model"})) {
    EXPECT_EQ(r.record.script, gemm.script);
    EXPECT_EQ(r.record.status, db::RecordStatus::kOk) << r.record.error.value_or("");
  }
  // Without --target, the GPU where one can be used, else the CPU.
  const std::string auto_command = std::string(DRAGON_BINARY_DIR) + "/dragon optimize '" + gemm.workload +
                                   "' --model " + weights + " --attempts 1 --temperature 0 --no-db > " + log_path +
                                   " 2>&1";
  ASSERT_EQ(std::system(auto_command.c_str()), 0) << read_text_file(log_path);
  const std::string expected = runtime::cuda_device_available() ? "(target cuda)" : "(target cpu)";
  EXPECT_NE(read_text_file(log_path).find(expected), std::string::npos) << read_text_file(log_path);
  fs::remove_all(root);
}

// Without --max-tokens an attempt may run until the model's context is full: a fixed cap
// (1,024 tokens once) cut every tiled convolution's script (about 1,100) short.
TEST(Propose, DefaultLengthIsWhatTheContextLeaves) {
  ModelConfig c;
  c.vocab = static_cast<int64_t>(tok().size()), c.d_model = 32, c.layers = 1, c.heads = 2, c.ffn = 64, c.context = 96;
  Transformer model(c, 3);
  const std::string weights = (fs::temp_directory_path() / "dragon_test_propose_length.safetensors").string();
  write_tensor_file(weights, checkpoint_tensors(model, StorageType::kF32, nullptr, std::nullopt, {{"prompt", "spec"}}));
  const std::string workload = "matmul:m=64,n=64,k=64";
  const int64_t prompt_tokens = static_cast<int64_t>(encode_prompt(tok(), PromptForm::kSpec, workload, std::nullopt).size());
  ASSERT_LT(prompt_tokens, c.context);
  ProposeRequest request;
  request.model_path = weights;
  request.workload = workload;
  request.attempts = 2;
  request.constrained = false;
  const std::vector<Proposal> proposals = propose(request);
  ASSERT_EQ(proposals.size(), 2u);
  int ran_on = 0;
  for (const Proposal& p : proposals) {
    // An untrained model seldom samples the end of script; when it runs on, only the
    // context stops it.
    if (p.stop == "eos") continue;
    ++ran_on;
    EXPECT_EQ(p.stop, "context full") << "attempt " << p.attempt;
    EXPECT_EQ(p.tokens, c.context - prompt_tokens) << "attempt " << p.attempt;
  }
  EXPECT_GE(ran_on, 1) << "seeds 0 and 1 both sampled the end of script early";
  // An explicit cap still holds.
  request.attempts = 1;
  request.max_new_tokens = 5;
  const std::vector<Proposal> capped = propose(request);
  EXPECT_LE(capped.at(0).tokens, 5);
  fs::remove(weights);
}

TEST(Checkpoint, RoundTripIsBitExactAndBf16IsRounded) {
  const ModelConfig c = ModelConfig::preset("tiny", static_cast<int64_t>(tok().size()));
  Transformer model(c, 13);
  AdamW optimizer(named_parameters(model), AdamW::Settings{});
  const std::vector<TokenizedExample> examples = tokenized(real_records());
  train_step(model, optimizer, batch_of(examples), 1e-3, 1.0);
  const TrainProgress progress{1, 0, 6};
  const std::string path = (fs::temp_directory_path() / "dragon_test_checkpoint.safetensors").string();
  write_tensor_file(path, checkpoint_tensors(model, StorageType::kF32, &optimizer, progress));
  const TensorFile file = read_tensor_file(path);
  Transformer loaded = load_model(file, path);
  EXPECT_EQ(loaded->config, c);
  auto a = model->named_parameters(), b = loaded->named_parameters();
  for (const auto& p : a) EXPECT_TRUE(torch::equal(p.value(), b[p.key()])) << p.key();
  AdamW restored(named_parameters(loaded), AdamW::Settings{});
  load_optimizer(file, restored, path);
  EXPECT_EQ(restored.steps(), 1);
  for (size_t i = 0; i < restored.state().size(); ++i) {
    EXPECT_TRUE(torch::equal(restored.state()[i].exp_avg, optimizer.state()[i].exp_avg));
    EXPECT_TRUE(torch::equal(restored.state()[i].exp_avg_sq, optimizer.state()[i].exp_avg_sq));
  }
  EXPECT_EQ(load_progress(file, path), progress);

  const TensorFile half = checkpoint_tensors(model, StorageType::kBF16, nullptr, std::nullopt);
  EXPECT_EQ(half.at("model.embedding.weight").type, StorageType::kBF16);
  EXPECT_FALSE(load_progress(half, "half").has_value());
  Transformer rounded = load_model(parse_tensor_file(serialize_tensor_file(half), "half"), "half");
  for (const auto& p : a) {
    EXPECT_TRUE(torch::equal(rounded->named_parameters()[p.key()], p.value().to(torch::kBFloat16).to(torch::kFloat32)))
        << p.key();
  }
  EXPECT_THROW(load_optimizer(half, restored, "half"), TensorFileError) << "no optimizer state in a weights file";

  // A damaged checkpoint is an error naming the file, never a model.
  const std::string bytes = read_text_file(path);
  write_text_file(path, bytes.substr(0, bytes.size() / 2));
  try {
    read_tensor_file(path);
    ADD_FAILURE() << "a truncated checkpoint was read";
  } catch (const TensorFileError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  fs::remove(path);
}

// A fresh folder ROOT with ROOT/data/train.jsonl of real_records() (and, when asked, a
// valid.jsonl of one of them): what the SFT tests train on.
fs::path sft_folder(const std::string& name, bool with_validation) {
  const fs::path root = fs::temp_directory_path() / name;
  fs::remove_all(root);
  fs::create_directories(root / "data");
  std::ofstream train(root / "data" / "train.jsonl");
  for (const SftRecord& r : real_records()) train << to_json_line(r) << "\n";
  if (with_validation) std::ofstream(root / "data" / "valid.jsonl") << to_json_line(real_records()[1]) << "\n";
  return root;
}

// A tiny model trained on the CPU from ROOT/data, batches of 4, no checkpoint before the end.
SftSettings tiny_cpu_settings(const fs::path& root) {
  SftSettings s;
  s.data_dir = (root / "data").string();
  s.preset = "tiny";
  s.batch_size = 4;
  s.checkpoint_every = 100;
  s.device = "cpu";
  return s;
}

// train_sft cut after 2 of 5 steps and resumed gives every later loss exactly as one
// uninterrupted run: weights, optimizer moments, step and data position all come back.
TEST(Sft, ResumedRunEqualsUninterruptedRun) {
  const fs::path root = sft_folder("dragon_test_sft_resume", /*with_validation=*/true);
  SftSettings s = tiny_cpu_settings(root);  // batches of 4 cross epochs: 6 examples
  s.steps = 5;
  s.warmup = 2;
  s.lr = 3e-3;
  s.log_every = 1;
  std::vector<std::string> lines;
  auto log = [&](const std::string& line) { lines.push_back(line); };
  s.out_dir = (root / "whole").string();
  const SftSummary whole = train_sft(s, log);
  ASSERT_EQ(whole.losses.size(), 5u);
  EXPECT_EQ(whole.examples, 6);

  s.out_dir = (root / "pieces").string();
  s.run_steps = 2;
  const SftSummary first = train_sft(s, log);
  ASSERT_EQ(first.losses.size(), 2u);
  s.resume = true;
  s.run_steps = 0;
  s.lr = 1.0;  // ignored: a resumed run keeps its checkpoint's settings
  const SftSummary rest = train_sft(s, log);
  ASSERT_EQ(rest.losses.size(), 3u);
  for (size_t i = 0; i < 5; ++i) {
    const double resumed = i < 2 ? first.losses[i] : rest.losses[i - 2];
    EXPECT_EQ(resumed, whole.losses[i]) << "step " << i + 1;
  }
  EXPECT_TRUE(fs::is_regular_file(root / "pieces" / "model.safetensors"));
  bool progress_line = false, valid_line = false;
  for (const std::string& line : lines) {
    progress_line |= line.find("tok/s") != std::string::npos && line.rfind("step 5/5", 0) == 0;
    valid_line |= line.rfind("valid step 5: loss", 0) == 0;
  }
  EXPECT_TRUE(progress_line);
  EXPECT_TRUE(valid_line);
  s.out_dir = (root / "nothing").string();
  EXPECT_THROW(train_sft(s, log), UserError) << "--resume without a checkpoint";
  fs::remove_all(root);
}

// A run out of time stops at the step it is on, checkpointed and with its weights written,
// and a resumed run takes the rest exactly as an uninterrupted run would have.
TEST(Sft, TimeBudgetStopsAtAStepBoundaryAndResumes) {
  const fs::path root = sft_folder("dragon_test_sft_time_budget", /*with_validation=*/false);
  SftSettings s = tiny_cpu_settings(root);
  s.steps = 4;
  s.warmup = 1;
  std::vector<std::string> lines;
  auto log = [&](const std::string& line) { lines.push_back(line); };
  s.out_dir = (root / "whole").string();
  const SftSummary whole = train_sft(s, log);
  EXPECT_FALSE(whole.stopped_by_time_budget);

  s.out_dir = (root / "timed").string();
  s.time_budget_s = 1e-9;  // spent by the first step
  const SftSummary first = train_sft(s, log);
  ASSERT_EQ(first.losses.size(), 1u);
  EXPECT_TRUE(first.stopped_by_time_budget);
  EXPECT_TRUE(fs::is_regular_file(root / "timed" / "model.safetensors"));
  // Every training line reads spec prompts: the weights say so, for sampling.
  const TensorFile weights = read_tensor_file((root / "timed" / "model.safetensors").string());
  EXPECT_EQ(weights.meta("prompt"), "spec");
  EXPECT_EQ(model_prompt_form(weights, "timed"), PromptForm::kSpec);
  TensorFile unnamed = weights;
  unnamed.metadata.erase("prompt");
  EXPECT_EQ(model_prompt_form(unnamed, "older"), PromptForm::kIr) << "files from before the entry read IR text";
  unnamed.metadata["prompt"] = "xml";
  EXPECT_THROW(model_prompt_form(unnamed, "bad"), TensorFileError);
  EXPECT_NE(lines.back().find("stopped by the time budget at step 1 of 4"), std::string::npos) << lines.back();
  s.resume = true;
  s.time_budget_s = 0;
  const SftSummary rest = train_sft(s, log);
  ASSERT_EQ(rest.losses.size(), 3u);
  EXPECT_FALSE(rest.stopped_by_time_budget);
  EXPECT_EQ(first.losses[0], whole.losses[0]);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(rest.losses[i], whole.losses[i + 1]) << "step " << i + 2;

  s.resume = false;
  s.time_budget_s = -1;
  EXPECT_THROW(train_sft(s, log), UserError) << "a negative time budget";
  fs::remove_all(root);
}

TEST(Sampling, NucleusKeepsTheSmallestSetReachingTopP) {
  const std::vector<float> probs = {0.15f, 0.5f, 0.05f, 0.3f};
  EXPECT_EQ(nucleus(probs, 0.5), (std::vector<TokenId>{1}));
  EXPECT_EQ(nucleus(probs, 0.7), (std::vector<TokenId>{1, 3}));
  EXPECT_EQ(nucleus(probs, 0.81), (std::vector<TokenId>{1, 3, 0}));
  EXPECT_EQ(nucleus(probs, 1.0), (std::vector<TokenId>{1, 3, 0, 2}));
  EXPECT_EQ(nucleus(probs, 0.0), (std::vector<TokenId>{1})) << "at least one";
}

TEST(Sampling, TopPDrawsOnlyFromTheNucleusInProportion) {
  torch::Tensor logits = torch::log(torch::tensor({0.5f, 0.3f, 0.15f, 0.05f}));  // top_p 0.75: ids 0 and 1
  std::mt19937_64 rng(1);
  std::map<TokenId, int> counts;
  const int n = 20000;
  const SamplingSettings nucleus_only{.temperature = 1.0, .top_p = 0.75};
  for (int i = 0; i < n; ++i) ++counts[sample_token(logits, nucleus_only, rng, {})];
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_NEAR(counts[0] / static_cast<double>(n), 0.5 / 0.8, 0.02);
  // Without the cut every id appears, in proportion.
  counts.clear();
  for (int i = 0; i < n; ++i) ++counts[sample_token(logits, SamplingSettings{.temperature = 1.0}, rng, {})];
  EXPECT_NEAR(counts[3] / static_cast<double>(n), 0.05, 0.01);
  // Only allowed ids come out, even the least likely.
  const std::vector<TokenId> allowed = {2, 3};
  for (int i = 0; i < 100; ++i) EXPECT_GE(sample_token(logits, SamplingSettings{}, rng, allowed), 2);
  EXPECT_EQ(sample_token(logits, SamplingSettings{.temperature = 0}, rng, allowed), 2);
}

TEST(Sampling, TemperatureZeroIsDeterministicAndSeedsRepeat) {
  const ModelConfig c = ModelConfig::preset("tiny", static_cast<int64_t>(tok().size()));
  Transformer model(c, 17);
  const std::vector<TokenId> prompt = tokenized(real_records())[0].tokens;
  std::span<const TokenId> head(prompt.data(), 8);
  const TokenId eos = tok().special(script::SpecialToken::kEos);
  const SamplingSettings greedy{.temperature = 0, .max_new_tokens = 12, .seed = 1};
  Generation a = generate(model, head, eos, greedy, nullptr);
  Generation b = generate(model, head, eos, SamplingSettings{.temperature = 0, .max_new_tokens = 12, .seed = 99}, nullptr);
  EXPECT_EQ(a.tokens, b.tokens) << "greedy ignores the seed";
  // The first greedy token is the argmax of the logits.
  torch::NoGradGuard no_grad;
  // Every greedy token is the argmax of the whole sequence's last logits (generation reads
  // one new token a step through its cache).
  std::vector<int64_t> sequence(head.begin(), head.end());
  for (TokenId t : a.tokens) {
    torch::Tensor whole = torch::tensor(sequence).view({1, -1});
    EXPECT_EQ(t, model->forward(whole)[0][-1].argmax().item<int64_t>()) << "after " << sequence.size() << " tokens";
    sequence.push_back(t);
  }
  const SamplingSettings hot{.temperature = 1.0, .top_p = 0.95, .max_new_tokens = 12, .seed = 5};
  EXPECT_EQ(generate(model, head, eos, hot, nullptr).tokens, generate(model, head, eos, hot, nullptr).tokens);
}

// The prompt a construction question about `spec` reads: spec form, ending with <|script|>.
std::vector<TokenId> spec_prompt(const std::string& spec) {
  SftRecord r;
  r.prompt = PromptForm::kSpec;
  r.workload = spec;
  script::Example e = to_example(r);
  e.script.reset();
  return tok().encode_example(e);
}

// Continuations sampled side by side are the ones sampled one at a time: each keeps its
// own seed, constraint and record while others stop early and leave the batch.
TEST(Sampling, SideBySideEqualsOneAtATime) {
  const ModelConfig c = ModelConfig::preset("tiny", static_cast<int64_t>(tok().size()));
  Transformer model(c, 23);
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload("softmax:shape=16x1024").func;
  const std::vector<TokenId> prompt = spec_prompt("softmax:shape=16x1024");
  const TokenId eos = tok().special(script::SpecialToken::kEos);
  const std::vector<SamplingSettings> settings = {
      {.temperature = 1.0, .top_p = 0.95, .max_new_tokens = 30, .seed = 3},
      {.temperature = 0, .max_new_tokens = 6, .seed = 4},
      {.temperature = 0.7, .top_p = 1.0, .max_new_tokens = 0, .seed = 5},
      {.temperature = 1.3, .top_p = 0.9, .max_new_tokens = 18, .seed = 6}};
  for (const bool constrained : {false, true}) {
    std::vector<std::unique_ptr<ScriptConstraint>> owned;
    std::vector<TokenConstraint*> constraints;
    std::vector<PolicyRecord> records(settings.size());
    std::vector<PolicyRecord*> record_of;
    for (PolicyRecord& record : records) {
      owned.push_back(std::make_unique<ScriptConstraint>(tok(), func));
      constraints.push_back(constrained ? owned.back().get() : nullptr);
      record_of.push_back(&record);
    }
    const std::vector<Generation> together = generate_side_by_side(model, prompt, eos, settings, constraints, record_of);
    ASSERT_EQ(together.size(), settings.size());
    for (size_t i = 0; i < settings.size(); ++i) {
      ScriptConstraint constraint(tok(), func);
      PolicyRecord alone_record;
      const Generation alone =
          generate(model, prompt, eos, settings[i], constrained ? &constraint : nullptr, &alone_record);
      EXPECT_EQ(together[i].tokens, alone.tokens) << "continuation " << i << (constrained ? ", constrained" : "");
      EXPECT_EQ(together[i].stop, alone.stop) << "continuation " << i;
      EXPECT_LE(static_cast<int64_t>(together[i].tokens.size()), settings[i].max_new_tokens);
      ASSERT_EQ(records[i].actions, alone_record.actions) << "continuation " << i;
      EXPECT_EQ(records[i].allowed, alone_record.allowed) << "continuation " << i;
      for (size_t t = 0; t < alone_record.log_probs.size(); ++t)
        EXPECT_NEAR(records[i].log_probs[t], alone_record.log_probs[t], 1e-4) << "continuation " << i << " token " << t;
    }
    EXPECT_TRUE(together[2].tokens.empty()) << "no room for a token";
    EXPECT_EQ(together[2].stop, Generation::Stop::kMaxTokens);
  }
  EXPECT_THROW(generate_side_by_side(model, prompt, eos, settings, std::vector<TokenConstraint*>(1, nullptr)), Error);
}

// A constraint that allows EOS and one other token everywhere, and lets the text end only
// after `shortest` tokens (a stand-in for an end check such as lowering).
class EndsLate final : public TokenConstraint {
 public:
  EndsLate(TokenId eos, TokenId other, size_t shortest) : allowed_{std::min(eos, other), std::max(eos, other)}, shortest_(shortest) {}
  std::vector<TokenId> allowed(std::span<const TokenId>) override { return allowed_; }
  bool may_end(std::span<const TokenId> generated) override {
    const bool ok = generated.size() >= shortest_;
    refusals += ok ? 0 : 1;
    return ok;
  }
  int64_t refusals = 0;

 private:
  std::vector<TokenId> allowed_;
  size_t shortest_;
};

// EOS that the constraint's may_end refuses is drawn again without it: no generation ends
// before the constraint lets it, the refusals are counted, and the policy record keeps
// the set the token was really drawn from.
TEST(Sampling, RefusedEndsAreDrawnAgainWithoutEos) {
  const ModelConfig c = ModelConfig::preset("tiny", static_cast<int64_t>(tok().size()));
  Transformer model(c, 29);
  const std::vector<TokenId> prompt = spec_prompt("softmax:shape=16x1024");
  const TokenId eos = tok().special(script::SpecialToken::kEos);
  const TokenId other = tok().byte_token('g');
  int ended = 0;
  int64_t refused = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    EndsLate constraint(eos, other, 4);
    PolicyRecord record;
    const Generation g = generate(model, prompt, eos, SamplingSettings{.temperature = 1.0, .max_new_tokens = 30, .seed = seed},
                                  &constraint, &record);
    EXPECT_EQ(g.ends_refused, constraint.refusals) << "seed " << seed;
    refused += g.ends_refused;
    if (g.stop == Generation::Stop::kEos) {
      ++ended;
      EXPECT_GE(g.tokens.size(), 4u) << "seed " << seed << " ended before the constraint let it";
    }
    for (TokenId t : g.tokens) EXPECT_EQ(t, other);
    ASSERT_EQ(record.actions.size(), record.allowed.size());
    for (size_t step = 0; step < record.actions.size(); ++step) {
      // Where EOS was refused, the token came from the set without it.
      const bool eos_listed = std::find(record.allowed[step].begin(), record.allowed[step].end(), eos) != record.allowed[step].end();
      if (!eos_listed) EXPECT_LT(step, 4u) << "seed " << seed << ": EOS was refused only before 4 tokens";
    }
  }
  EXPECT_GE(refused, 1) << "no seed drew EOS early: the test checks nothing";
  EXPECT_GE(ended, 1) << "no seed ended at EOS";
  // A constraint that refuses every end and allows nothing else stops the generation, saying so.
  EndsLate never(eos, eos, 1000);
  const Generation stuck = generate(model, prompt, eos, SamplingSettings{.temperature = 1.0, .max_new_tokens = 30, .seed = 1}, &never);
  EXPECT_EQ(stuck.stop, Generation::Stop::kNothingAllowed);
  EXPECT_EQ(stuck.ends_refused, 1);
}

// ScriptConstraint's end check sees the workload as the script schedules it; a refusal
// keeps its reason.
TEST(Sampling, ScriptConstraintEndCheckSeesTheScheduledWorkload) {
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload("matmul:m=64,n=64,k=64").func;
  const std::string text = "gb C\ngl b0 3\nsp l0 8 8\n";
  const ir::PrimFunc expected = schedule::replay(script::decode(text), func).func();
  std::optional<ir::PrimFunc> seen;
  ScriptConstraint passes(tok(), func, [&](const ir::PrimFunc& f) -> std::optional<std::string> {
    seen = f;
    return std::nullopt;
  });
  const std::vector<TokenId> tokens = tok().encode(text);
  const std::vector<TokenId> allowed = passes.allowed(tokens);
  ASSERT_TRUE(std::binary_search(allowed.begin(), allowed.end(), tok().special(script::SpecialToken::kEos)));
  EXPECT_TRUE(passes.may_end(tokens));
  ASSERT_TRUE(seen.has_value());
  EXPECT_TRUE(ir::structural_equal(*seen, expected));
  EXPECT_TRUE(passes.last_refusal().empty());
  ScriptConstraint refuses(tok(), func, [](const ir::PrimFunc&) -> std::optional<std::string> { return "no kernel"; });
  refuses.allowed(tokens);
  EXPECT_FALSE(refuses.may_end(tokens));
  EXPECT_EQ(refuses.last_refusal(), "no kernel");
  // Without an end check every end the decoder allows stands.
  ScriptConstraint plain(tok(), func);
  EXPECT_TRUE(plain.may_end(tokens));

  // After its first refusal an attempt writes on at most write_on_tokens, then ends at the
  // next line end whatever the check says.
  const TokenId eos = tok().special(script::SpecialToken::kEos);
  const std::vector<TokenId> short_script = tok().encode("gb C\n");
  const std::vector<TokenId> longer_script = tok().encode("gb C\ngl b0 3\n");
  const auto written = static_cast<int64_t>(longer_script.size() - short_script.size());
  auto never = [](const ir::PrimFunc&) -> std::optional<std::string> { return "never"; };
  ScriptConstraint bounded(tok(), func, never, written);
  bounded.allowed(short_script);
  EXPECT_FALSE(bounded.may_end(short_script)) << "the first refusal";
  const std::vector<TokenId> at_allowance = bounded.allowed(longer_script);
  EXPECT_EQ(at_allowance, std::vector<TokenId>{eos}) << "the allowance is spent: only the end";
  EXPECT_TRUE(bounded.may_end(longer_script));
  ScriptConstraint generous(tok(), func, never, written + 1);
  generous.allowed(short_script);
  EXPECT_FALSE(generous.may_end(short_script));
  EXPECT_GT(generous.allowed(longer_script).size(), 1u) << "one token of allowance left";
  EXPECT_FALSE(generous.may_end(longer_script));
}

// An untrained model sampling under the script constraint writes only viable prefixes.
TEST(Sampling, ConstraintKeepsEveryPrefixViable) {
  const ModelConfig c = ModelConfig::preset("tiny", static_cast<int64_t>(tok().size()));
  Transformer model(c, 19);
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload("softmax:shape=16x1024").func;
  const std::vector<TokenId> prompt = spec_prompt("softmax:shape=16x1024");
  const TokenId eos = tok().special(script::SpecialToken::kEos);
  for (uint64_t seed : {1, 2}) {
    ScriptConstraint constraint(tok(), func);
    Generation g = generate(model, prompt, eos, SamplingSettings{.temperature = 1.0, .max_new_tokens = 40, .seed = seed},
                            &constraint);
    ASSERT_NE(g.stop, Generation::Stop::kNothingAllowed);
    ScriptConstraint judge(tok(), func);
    for (size_t n = 1; n <= g.tokens.size(); ++n) {
      const std::string text = tok().decode(std::span(g.tokens).first(n));
      EXPECT_TRUE(judge.is_viable(text)) << "seed " << seed << ": " << text;
    }
    if (g.stop == Generation::Stop::kEos) {
      EXPECT_TRUE(judge.is_complete(tok().decode(g.tokens)));
    }
  }
}

// `dragon evaluate` end to end on the CPU: a data set searched in seconds (`dragon data
// build` on one small workload), an untrained model whose constrained attempts replay
// (whether they verify does not matter here); one JSON line per example, a summary, a
// second run that measures nothing new, and a third with other settings refused.
TEST(Evaluate, WritesALinePerExampleResumesAndRefusesOtherSettings) {
  const fs::path root = fs::temp_directory_path() / "dragon_test_evaluate";
  fs::remove_all(root);
  fs::create_directories(root);
  auto dragon = [&](const std::string& args) {
    const std::string log = (root / "log.txt").string();
    const int status = std::system((std::string(DRAGON_BINARY_DIR) + "/dragon " + args + " > " + log + " 2>&1").c_str());
    return std::pair<int, std::string>(status, read_text_file(log));
  };
  std::ofstream(root / "specs.txt") << "matmul:m=64,n=64,k=64\n";
  const std::string set = (root / "set").string();
  auto [built, build_log] = dragon("data build --corpus " + (root / "specs.txt").string() + " --db " +
                                   (root / "tune.db").string() + " --out " + set +
                                   " --target cpu --trials 6 --batch 3 --seed 5 --quiet");
  ASSERT_EQ(built, 0) << build_log;
  const data::DataSetContents contents = data::read_data_set(set);
  ASSERT_FALSE(contents.examples.empty()) << "a tuned 64^3 matmul beats its default schedule";
  const std::string split(data::split_id(contents.examples.front().example.split));

  const ModelConfig c = ModelConfig::preset("tiny", static_cast<int64_t>(tok().size()));
  Transformer model(c, 29);
  const std::string weights = (root / "model.safetensors").string();
  write_tensor_file(weights, checkpoint_tensors(model, StorageType::kF32, nullptr, std::nullopt, {{"prompt", "spec"}}));
  const std::string out = (root / "evaluation.jsonl").string();
  const std::string evaluate = "evaluate --data " + set + " --split " + split + " --model " + weights +
                               " --target cpu --limit 1 --out " + out;

  auto [first, first_log] = dragon(evaluate + " --attempts 2");
  ASSERT_EQ(first, 0) << first_log;
  const std::string lines = read_text_file(out);
  const int64_t count = std::count(lines.begin(), lines.end(), '\n');
  EXPECT_GE(count, 1);
  EXPECT_LE(count, 2) << "--limit 1: one example per task";
  const nlohmann::json line = nlohmann::json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(line.at("attempts"), 2);
  EXPECT_EQ(line.at("workload"), "matmul:m=64,n=64,k=64,trans_a=false,trans_b=false,dtype=f32") << "canonical";
  EXPECT_FALSE(line.at("target_ms").is_null()) << "the search's best verifies again: " << line.dump();
  EXPECT_NE(first_log.find("per-attempt: applied"), std::string::npos) << first_log;

  auto [second, second_log] = dragon(evaluate + " --attempts 2");
  ASSERT_EQ(second, 0) << second_log;
  EXPECT_EQ(read_text_file(out), lines) << "every example was measured already";
  EXPECT_EQ(second_log.find("verified, best"), std::string::npos) << second_log;

  auto [summary, summary_log] = dragon(evaluate + " --attempts 2 --summary-only");
  ASSERT_EQ(summary, 0) << summary_log;
  EXPECT_NE(summary_log.find("per-attempt: applied"), std::string::npos) << summary_log;

  auto [third, third_log] = dragon(evaluate + " --attempts 3");
  EXPECT_NE(third, 0);
  EXPECT_NE(third_log.find("other settings"), std::string::npos) << third_log;

  // --lower-only runs nothing: each attempt is applied and lowered for CUDA, and every
  // attempt has a status (lowered, or why not) that adds up to the attempts.
  const std::string lowered_out = (root / "lowered.jsonl").string();
  const std::string lower_only = "evaluate --data " + set + " --split " + split + " --model " + weights +
                                 " --per-workload 1 --attempts 3 --lower-only --out " + lowered_out;
  auto [lowering, lowering_log] = dragon(lower_only);
  ASSERT_EQ(lowering, 0) << lowering_log;
  const std::string lowered_text = read_text_file(lowered_out);
  EXPECT_LE(std::count(lowered_text.begin(), lowered_text.end(), '\n'), 2) << "one workload: one example per task";
  const nlohmann::json lowered_line = nlohmann::json::parse(lowered_text.substr(0, lowered_text.find('\n')));
  EXPECT_EQ(lowered_line.at("settings").at("target"), "cuda");
  EXPECT_TRUE(lowered_line.at("settings").at("lower_only").get<bool>());
  EXPECT_FALSE(lowered_line.contains("best_ms")) << "nothing was timed";
  int by_status = 0;
  for (const auto& [status, n] : lowered_line.at("statuses").items()) by_status += n.get<int>();
  EXPECT_EQ(by_status, 3);
  EXPECT_EQ(lowered_line.at("statuses").value("ok", 0), lowered_line.at("lowered").get<int>());
  EXPECT_LE(lowered_line.at("lowered").get<int>(), lowered_line.at("applied").get<int>());
  EXPECT_NE(lowering_log.find("lowered for CUDA"), std::string::npos) << lowering_log;
  auto [cpu_lowering, cpu_lowering_log] = dragon(lower_only + " --target cpu");
  EXPECT_NE(cpu_lowering, 0);
  EXPECT_NE(cpu_lowering_log.find("lowers for CUDA"), std::string::npos) << cpu_lowering_log;
  fs::remove_all(root);
}

}  // namespace
}  // namespace dragon::model
