// Reinforcement learning on the CPU, in seconds: group advantages, the clipped-ratio loss
// and its gradients against independent computations (clip-higher, zero-variance groups
// dropped, gradient only at sampled tokens), the sampler's log-probs against the trainer's
// recomputation, the reward from real CPU measurements (penalties, log speedup, the
// kernel-hash cache), a resumed run equal to an uninterrupted one, and `dragon train rl`.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "checkpoint.h"
#include "dragon/model/rl/reward.h"
#include "dragon/model/rl/train_rl.h"
#include "dragon/model/script_constraint.h"
#include "dragon/ops/op_registry.h"
#include "dragon/search/cpu_measurer.h"
#include "dragon/support/file.h"
#include "rl/grpo.h"
#include "sampling.h"
#include "training.h"

namespace dragon::model {
namespace {

namespace fs = std::filesystem;
using script::TokenId;

const script::Tokenizer& tok() { return script::Tokenizer::standard(); }

TEST(GroupAdvantages, MeanCentredPerGroupAndEqualGroupsDropped) {
  const std::vector<double> rewards = {1, -1, 0.5, 0.5, /**/ 2, 2, 2, 2, /**/ 0, 1, 0, 1};
  const std::vector<std::optional<double>> a = group_advantages(rewards, 4, false);
  ASSERT_EQ(a.size(), 12u);
  // Group means 0.25 and 0.5, computed by hand.
  const std::vector<double> first = {0.75, -1.25, 0.25, 0.25}, third = {-0.5, 0.5, -0.5, 0.5};
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(a[i].has_value());
    EXPECT_DOUBLE_EQ(*a[i], first[i]);
    EXPECT_FALSE(a[4 + i].has_value()) << "a group of equal rewards is dropped";
    ASSERT_TRUE(a[8 + i].has_value());
    EXPECT_DOUBLE_EQ(*a[8 + i], third[i]);
  }
  // Scaled: population standard deviations 0.75 and 0.5.
  const std::vector<std::optional<double>> s = group_advantages(rewards, 4, true);
  EXPECT_DOUBLE_EQ(*s[0], 1.0);
  EXPECT_DOUBLE_EQ(*s[1], -1.25 / 0.75);
  EXPECT_DOUBLE_EQ(*s[9], 1.0);
  EXPECT_FALSE(s[5].has_value());
}

// Two hand-made rollouts over a vocabulary of 5: one with a constraint at its first action,
// one with constraints at its last two.
std::vector<Rollout> hand_rollouts() {
  Rollout a;
  a.prompt = {1, 2};
  a.policy.actions = {3, 4};
  a.policy.allowed = {{1, 3}, {}};
  a.policy.log_probs = {0, 0};
  a.advantage = 0.5;
  Rollout b;
  b.prompt = {1};
  b.policy.actions = {2, 0, 4};
  b.policy.allowed = {{}, {0, 2}, {4}};
  b.policy.log_probs = {0, 0, 0};
  b.advantage = -1.5;
  return {a, b};
}

// log p(action) under softmax(logits / T) over the allowed ids, in double, element by element.
double reference_log_prob(const torch::Tensor& row, const std::vector<TokenId>& allowed, TokenId action, double T) {
  std::vector<TokenId> ids = allowed;
  if (ids.empty()) {
    for (int v = 0; v < row.size(0); ++v) ids.push_back(v);
  }
  double total = 0;
  for (TokenId id : ids) total += std::exp(row[id].item<double>() / T);
  return row[action].item<double>() / T - std::log(total);
}

TEST(GrpoLoss, AtRatioOneLossAndGradientsMatchIndependentComputation) {
  const std::vector<Rollout> rollouts = hand_rollouts();
  PolicyBatch batch = make_policy_batch(rollouts, 5, 0, torch::kCPU);
  ASSERT_EQ(batch.inputs.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(batch.action_count, 5);
  const double T = 0.7;
  torch::manual_seed(3);
  torch::Tensor logits = torch::randn({2, 3, 5}).set_requires_grad(true);
  // Where each action sits: rollout 0 at positions 1, 2; rollout 1 at 0, 1, 2.
  const std::vector<std::vector<int64_t>> positions = {{1, 2}, {0, 1, 2}};
  torch::Tensor lp = action_log_probs(logits, batch, T).detach();
  for (size_t b = 0; b < 2; ++b) {
    for (size_t t = 0; t < positions[b].size(); ++t) {
      const double expected = reference_log_prob(logits[b][positions[b][t]].detach(), rollouts[b].policy.allowed[t],
                                                  rollouts[b].policy.actions[t], T);
      EXPECT_NEAR(lp[b][positions[b][t]].item<double>(), expected, 1e-5) << b << "," << t;
    }
  }
  batch.old_log_probs = lp.clone();  // the policy that sampled is the one being trained: ratio 1
  GrpoLoss loss = grpo_loss(logits, batch, GrpoSettings{.temperature = T});
  // Every ratio is 1: loss = -(sum over tokens of A) / tokens.
  EXPECT_NEAR(loss.loss.item<double>(), -(2 * 0.5 + 3 * -1.5) / 5.0, 1e-6);
  EXPECT_NEAR(loss.mean_ratio, 1.0, 1e-6);
  EXPECT_EQ(loss.clipped_fraction, 0.0);
  loss.loss.backward();
  torch::Tensor grad = logits.grad();
  // d loss / d logit_v = -(A / N) (1[v = action] - p_v) / T over the allowed ids, 0 for the
  // others, and 0 wherever no token was sampled (rollout 0's position 0 is its prompt).
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 3; ++i) {
      auto at = std::find(positions[b].begin(), positions[b].end(), i);
      for (int64_t v = 0; v < 5; ++v) {
        double expected = 0;
        if (at != positions[b].end()) {
          const size_t t = static_cast<size_t>(at - positions[b].begin());
          const std::vector<TokenId>& allowed = rollouts[b].policy.allowed[t];
          const bool ok = allowed.empty() || std::find(allowed.begin(), allowed.end(), v) != allowed.end();
          if (ok) {
            const double p = std::exp(reference_log_prob(logits[b][i].detach(), allowed, static_cast<TokenId>(v), T));
            const double onehot = v == rollouts[b].policy.actions[t] ? 1.0 : 0.0;
            expected = -(rollouts[b].advantage / 5.0) * (onehot - p) / T;
          }
        }
        EXPECT_NEAR(grad[b][i][v].item<double>(), expected, 1e-6) << "b " << b << " position " << i << " id " << v;
      }
    }
  }
}

// One action, advantage +-1, the sampler's log-prob set so that the ratio is `ratio`:
// the loss and whether the action's logit gets a gradient.
struct ClipCase {
  double loss;
  double grad;
  double clipped_fraction;
};
ClipCase clip_case(double advantage, double ratio) {
  Rollout r;
  r.prompt = {1};
  r.policy.actions = {2};
  r.policy.allowed = {{}};
  r.policy.log_probs = {0};
  r.advantage = advantage;
  PolicyBatch batch = make_policy_batch(std::vector<Rollout>{r}, 4, 0, torch::kCPU);
  torch::Tensor logits = torch::tensor({0.1f, -0.3f, 0.4f, 0.2f}).view({1, 1, 4}).set_requires_grad(true);
  batch.old_log_probs = action_log_probs(logits, batch, 1.0).detach() - std::log(ratio);
  GrpoLoss loss = grpo_loss(logits, batch, GrpoSettings{});  // clip 0.2 low, 0.28 high
  loss.loss.backward();
  return {loss.loss.item<double>(), logits.grad()[0][0][2].item<double>(), loss.clipped_fraction};
}

TEST(GrpoLoss, ClippedRatiosCarryNoGradientWithClipHigher) {
  // A > 0, ratio 1.5 > 1 + 0.28: clipped at 1.28, no gradient.
  ClipCase c = clip_case(1, 1.5);
  EXPECT_NEAR(c.loss, -1.28, 1e-5);
  EXPECT_EQ(c.grad, 0.0);
  EXPECT_EQ(c.clipped_fraction, 1.0);
  // A > 0, ratio 1.25: inside clip-higher's range (a symmetric 0.2 would have clipped it).
  c = clip_case(1, 1.25);
  EXPECT_NEAR(c.loss, -1.25, 1e-5);
  EXPECT_LT(c.grad, 0.0) << "pushing the action up: its logit's gradient is negative";
  // A < 0, ratio 1.5: the unclipped term is the smaller, so it keeps its gradient.
  c = clip_case(-1, 1.5);
  EXPECT_NEAR(c.loss, 1.5, 1e-5);
  EXPECT_GT(c.grad, 0.0);
  EXPECT_EQ(c.clipped_fraction, 0.0);
  // A < 0, ratio 0.5 < 1 - 0.2: clipped at 0.8, no gradient.
  c = clip_case(-1, 0.5);
  EXPECT_NEAR(c.loss, 0.8, 1e-5);
  EXPECT_EQ(c.grad, 0.0);
  // A > 0, ratio 0.5: unclipped, gradient.
  c = clip_case(1, 0.5);
  EXPECT_NEAR(c.loss, -0.5, 1e-5);
  EXPECT_LT(c.grad, 0.0);
}

TEST(GrpoLoss, KlTermIsTheK3EstimateToTheReference) {
  const std::vector<Rollout> rollouts = hand_rollouts();
  PolicyBatch batch = make_policy_batch(rollouts, 5, 0, torch::kCPU);
  torch::manual_seed(5);
  torch::Tensor logits = torch::randn({2, 3, 5});
  torch::Tensor lp = action_log_probs(logits, batch, 1.0);
  batch.old_log_probs = lp.clone();
  const GrpoSettings settings{.kl_coef = 0.1};
  EXPECT_NEAR(grpo_loss(logits, batch, settings, lp.clone()).kl, 0.0, 1e-7) << "no divergence from itself";
  torch::Tensor reference = lp - 0.3 * batch.action_mask.to(torch::kFloat32);
  GrpoLoss loss = grpo_loss(logits, batch, settings, reference);
  const double d = -0.3, k3 = std::exp(d) - d - 1;
  EXPECT_NEAR(loss.kl, k3, 1e-6);
  EXPECT_NEAR(loss.loss.item<double>(), -(2 * 0.5 + 3 * -1.5) / 5.0 + 0.1 * k3, 1e-6);
}

ModelConfig small_config() {
  ModelConfig c;
  c.vocab = static_cast<int64_t>(tok().size()), c.d_model = 32, c.layers = 1, c.heads = 2, c.ffn = 64, c.context = 160;
  return c;
}

std::vector<TokenId> prompt_of(const std::string& spec, const std::optional<std::string>& existing = std::nullopt) {
  SftRecord r;
  r.task = existing ? TaskKind::kRefinement : TaskKind::kConstruction;
  r.prompt = PromptForm::kSpec;
  r.workload = spec;
  r.existing_script = existing;
  script::Example e = to_example(r);
  e.script.reset();
  return tok().encode_example(e);
}

// The sampler's log-probs are the trainer's (same temperature, same allowed ids), and one
// GRPO step moves a rewarded sample's probability up and a penalised one's down.
TEST(GrpoStep, SamplerLogProbsMatchTheTrainerAndTheUpdateFollowsTheAdvantage) {
  Transformer model(small_config(), 7);
  const std::string spec = "matmul:m=64,n=64,k=64";
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const TokenId eos = tok().special(script::SpecialToken::kEos);
  std::vector<Rollout> rollouts;
  for (uint64_t seed : {1, 2}) {
    ScriptConstraint constraint(tok(), func);
    Rollout r;
    r.prompt = prompt_of(spec);
    generate(model, r.prompt, eos, SamplingSettings{.temperature = 0.8, .max_new_tokens = 20, .seed = seed}, &constraint,
             &r.policy);
    ASSERT_FALSE(r.policy.actions.empty());
    for (const auto& allowed : r.policy.allowed) EXPECT_FALSE(allowed.empty()) << "the constraint names its ids";
    rollouts.push_back(std::move(r));
  }
  rollouts[0].advantage = 1.0;
  rollouts[1].advantage = -1.0;
  const PolicyBatch batch = make_policy_batch(rollouts, model->config.vocab, 0, torch::kCPU);
  torch::Tensor before;
  {
    torch::NoGradGuard no_grad;
    before = action_log_probs(model->forward(batch.inputs), batch, 0.8);
  }
  torch::Tensor mask = batch.action_mask;
  EXPECT_LT((before - batch.old_log_probs).abs().masked_select(mask).max().item<double>(), 1e-4)
      << "the trainer recomputes the sampler's distribution";
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (auto& p : model->named_parameters()) named.emplace_back(p.key(), p.value());
  AdamW optimizer(named, AdamW::Settings{.weight_decay = 0});
  const GrpoStepResult r = grpo_step(model, optimizer, batch, GrpoSettings{.temperature = 0.8}, nullptr, 1e-3, 1.0);
  EXPECT_GT(r.grad_norm, 0);
  torch::NoGradGuard no_grad;
  torch::Tensor after = action_log_probs(model->forward(batch.inputs), batch, 0.8);
  auto sequence_log_prob = [&](const torch::Tensor& lp, int64_t b) { return lp[b].masked_select(mask[b]).sum().item<double>(); };
  EXPECT_GT(sequence_log_prob(after, 0), sequence_log_prob(before, 0)) << "the rewarded sample became likelier";
  EXPECT_LT(sequence_log_prob(after, 1), sequence_log_prob(before, 1)) << "the penalised one less likely";
}

// A prefix an RL sample wrote (the fixture below, at temperature 1): asking what may follow
// made blockize's check build an i32 constant of 2^31 from an unbounded offset, an internal
// error that ended the run. It is a judgement now, whatever it allows.
TEST(ScriptConstraint, AWildPrefixIsJudgedNotAnInternalError) {
  ScriptConstraint constraint(tok(), ops::OpRegistry::global().make_workload("matmul:m=64,n=64,k=64").func);
  const std::string prefix =
      "gb C\ngl b0 3\nspt l0 3 64 = 2 8 4\nsp l0 24104273 58 false\nspt l1 3 644162 = 4 4 4\nsp l1 v4 v5 v5\n"
      "spt l2 2 64 = 2 32\nsp l2 v6 v7\nro l3 l6 l4 l7 l9 l5\nsp l3 v1 v2 64 64 642 4\n";
  EXPECT_NO_THROW(constraint.allowed(tok().encode(prefix)));
}

std::string expert_gemm() { return read_text_file(std::string(DRAGON_SOURCE_DIR) + "/data/scripts/expert/gemm_cpu.script"); }

RewardEnvironmentFactory cpu_factory() {
  return [](const std::string&, const ir::PrimFunc& func) {
    search::CpuMeasurerOptions options;
    options.timer.max_seconds = 0.05;
    return RewardEnvironment{search::make_cpu_measurer(func, options), func};
  };
}

// Real CPU measurements: every outcome's reward, the speedup from the measurer's medians,
// an identical kernel measured once.
TEST(RlReward, FromCpuMeasurementsWithPenaltiesAndTheKernelHashCache) {
  MeasuredRewarder rewarder(cpu_factory(), RewardSettings{});
  const RlPrompt construction{PromptForm::kSpec, "matmul:m=64,n=64,k=64", std::nullopt, "test:1"};
  const std::string expert = expert_gemm();
  const std::vector<ScoredScript> s = rewarder.score(
      construction, {{expert, true}, {expert, true}, {"", true}, {"this is no script", true}, {expert, false}});
  ASSERT_EQ(s.size(), 5u);
  const double baseline = rewarder.baseline_ms(construction);
  for (int i : {0, 1, 2}) {
    ASSERT_EQ(s[i].outcome, RewardOutcome::kVerified) << i << ": " << s[i].why;
    const double median = *s[i].measured->median_ms();
    EXPECT_DOUBLE_EQ(*s[i].speedup, baseline / median);
    EXPECT_DOUBLE_EQ(s[i].reward, 1.0 + std::max(-1.0, std::log(baseline / median)));
  }
  EXPECT_TRUE(s[1].measured->from_cache) << "the same kernel twice is measured once";
  EXPECT_EQ(s[1].reward, s[0].reward);
  EXPECT_EQ(s[1].measured->kernel_hash, s[0].measured->kernel_hash);
  EXPECT_TRUE(s[2].measured->from_cache) << "the empty script is the baseline's kernel";
  EXPECT_EQ(s[2].reward, 1.0) << "speedup exactly 1 over itself";
  EXPECT_EQ(s[3].outcome, RewardOutcome::kNotApplied);
  EXPECT_EQ(s[3].reward, -1.0);
  EXPECT_FALSE(s[3].measured.has_value()) << "nothing is measured of what does not replay";
  EXPECT_EQ(s[4].outcome, RewardOutcome::kNotApplied) << "a script sampling did not end is not judged";
  EXPECT_GE(rewarder.cached(), 2);
  std::printf("reward: default %.4f ms, expert GEMM %.4f ms (%.2fx), reward %.3f\n", baseline,
              *s[0].measured->median_ms(), *s[0].speedup, s[0].reward);

  // Refinement: the prompt's script is the baseline (the expert's cached measurement), so
  // the default schedule's speedup is the inverse of the expert's. (No claim here about
  // which is faster: on this shared machine a parallel kernel can be preempted.)
  const RlPrompt refinement{PromptForm::kSpec, "matmul:m=64,n=64,k=64", expert, "test:2"};
  const std::vector<ScoredScript> r = rewarder.score(refinement, {{"", true}, {expert, true}});
  EXPECT_EQ(rewarder.baseline_ms(refinement), *s[0].measured->median_ms());
  ASSERT_EQ(r[0].outcome, RewardOutcome::kVerified);
  EXPECT_DOUBLE_EQ(*r[0].speedup, 1.0 / *s[0].speedup);
  EXPECT_EQ(*r[1].speedup, 1.0) << "the prompt's own script, from the cache";

  // A verified kernel must never score as low as a failure.
  EXPECT_THROW(MeasuredRewarder(cpu_factory(), RewardSettings{.base_reward = 0, .bonus_floor = -1}), UserError);
}

TEST(RlReward, PromptsFileErrorsSayWhereAndWhy) {
  const fs::path path = fs::temp_directory_path() / "dragon_test_rl_prompts.jsonl";
  auto error_of = [&](const std::string& text) -> std::string {
    write_text_file(path.string(), text);
    try {
      read_rl_prompts(path.string());
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string good = R"({"task": "construction", "prompt": "spec", "workload": "relu"})";
  write_text_file(path.string(), good + "\n\n" +
                                     R"({"task": "refinement", "workload": "matmul:m=64,n=64,k=64", "existing_script": ")" +
                                     std::string("gb C\\n") + "\", \"script\": \"ignored\"}\n");
  const std::vector<RlPrompt> prompts = read_rl_prompts(path.string());
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].prompt, PromptForm::kSpec);
  EXPECT_EQ(prompts[1].existing_script, "gb C\n");
  EXPECT_EQ(prompts[1].origin, path.string() + ":3");
  EXPECT_NE(error_of(good + "\n{oops\n").find(path.string() + ":2: not JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"task": "construction", "workload": "nosuchop"})").find(":1: workload 'nosuchop' does not build"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"task": "refinement", "workload": "relu", "existing_script": "gb Nope\n"})")
                .find(":1: 'existing_script' does not replay"),
            std::string::npos);
  EXPECT_NE(error_of("\n").find("no prompts"), std::string::npos);
  fs::remove(path);
}

// A model that has seen the expert GEMM and the empty script for the GEMM's prompt, so
// that its samples at temperature 1 are a mix of both and of broken attempts.
std::string write_fixture_model(const fs::path& root) {
  const std::string spec = "matmul:m=64,n=64,k=64";
  std::vector<TokenizedExample> examples;
  for (const std::string& script_text : {expert_gemm(), std::string()}) {
    SftRecord r;
    r.prompt = PromptForm::kSpec;
    r.workload = spec;
    r.script = script_text;
    examples.push_back(tokenize(tok(), to_example(r)));
  }
  at::globalContext().setFlushDenormal(true);
  Transformer model(small_config(), 11);
  std::vector<std::pair<std::string, torch::Tensor>> named;
  for (auto& p : model->named_parameters()) named.emplace_back(p.key(), p.value());
  AdamW optimizer(named, AdamW::Settings{.weight_decay = 0});
  std::vector<const TokenizedExample*> pointers = {&examples[0], &examples[1]};
  const Batch batch = make_batch(pointers, tok().special(script::SpecialToken::kPad), torch::kCPU);
  for (int step = 0; step < 40; ++step) train_step(model, optimizer, batch, 1e-2, 1.0);
  fs::create_directories(root);
  const std::string path = (root / "init.safetensors").string();
  write_tensor_file(path, checkpoint_tensors(model, StorageType::kF32, nullptr, std::nullopt));
  write_text_file((root / "prompts.jsonl").string(),
                  R"({"task": "construction", "prompt": "spec", "workload": ")" + spec + "\"}\n");
  return path;
}

// Rewards that depend only on the script's text, so two runs see the same rewards.
class TextRewarder final : public Rewarder {
 public:
  std::vector<ScoredScript> score(const RlPrompt&, const std::vector<SampledScript>& scripts) override {
    std::vector<ScoredScript> out;
    for (const SampledScript& s : scripts) {
      ScoredScript r;
      r.outcome = s.ended ? RewardOutcome::kVerified : RewardOutcome::kNotApplied;
      r.reward = s.ended ? static_cast<double>(s.text.size() % 7) / 7.0 : -1.0;
      if (s.ended) r.speedup = 1.0;
      out.push_back(r);
    }
    return out;
  }
};

TEST(TrainRl, ResumedRunEqualsUninterruptedRun) {
  const fs::path root = fs::temp_directory_path() / "dragon_test_rl_resume";
  fs::remove_all(root);
  RlSettings s;
  s.init = write_fixture_model(root);
  s.prompts = (root / "prompts.jsonl").string();
  s.steps = 3;
  s.group = 4;
  s.lr = 1e-3;
  s.max_new_tokens = 120;
  s.device = "cpu";
  std::vector<std::string> lines;
  auto log = [&](const std::string& line) { lines.push_back(line); };
  TextRewarder rewarder;
  s.out_dir = (root / "whole").string();
  const RlSummary whole = train_rl(s, rewarder, log);
  ASSERT_EQ(whole.steps.size(), 3u);
  s.out_dir = (root / "pieces").string();
  s.run_steps = 1;
  const RlSummary first = train_rl(s, rewarder, log);
  s.resume = true;
  s.run_steps = 0;
  s.lr = 1.0;  // ignored: the checkpoint's settings win
  const RlSummary rest = train_rl(s, rewarder, log);
  ASSERT_EQ(first.steps.size(), 1u);
  ASSERT_EQ(rest.steps.size(), 2u);
  EXPECT_EQ(rest.steps[0].step, 2);
  for (size_t i = 0; i < 3; ++i) {
    const RlStepStats& resumed = i == 0 ? first.steps[0] : rest.steps[i - 1];
    EXPECT_EQ(resumed.scripts, whole.steps[i].scripts) << "step " << i + 1 << ": the same samples";
    EXPECT_EQ(resumed.loss, whole.steps[i].loss) << "step " << i + 1;
  }
  bool some_update = false;
  for (const RlStepStats& st : whole.steps) some_update |= st.updated;
  EXPECT_TRUE(some_update) << "the fixture's samples differ, so some group carries an update";
  const TensorFile a = read_tensor_file((root / "whole" / "checkpoint.safetensors").string());
  const TensorFile b = read_tensor_file((root / "pieces" / "checkpoint.safetensors").string());
  Transformer ma = load_model(a, "whole"), mb = load_model(b, "pieces");
  for (const auto& p : ma->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), mb->named_parameters()[p.key()])) << p.key();
  EXPECT_EQ(load_progress(b, "pieces"), load_progress(a, "whole"));
  EXPECT_EQ(load_progress(a, "whole")->step, 3);
  EXPECT_TRUE(fs::is_regular_file(root / "pieces" / "model.safetensors"));
  // Several updates on one step's samples: after the first the policy is not the
  // sampler's, ratios move off 1 and the clip starts to act.
  RlSettings more = s;
  more.resume = false;
  more.run_steps = 0;
  more.steps = 1;
  more.updates = 4;
  more.lr = 3e-2;
  more.out_dir = (root / "updates").string();
  const RlSummary updated = train_rl(more, rewarder, log);
  ASSERT_TRUE(updated.steps.at(0).updated);
  EXPECT_GT(std::abs(updated.steps[0].mean_ratio - 1.0), 1e-3) << "the last update is off-policy";
  EXPECT_GT(updated.steps[0].clipped_fraction, 0.0) << "and some of its ratios are clipped";
  EXPECT_EQ(whole.steps[0].clipped_fraction, 0.0) << "a single update is on-policy: nothing clipped";
  EXPECT_NEAR(whole.steps[0].mean_ratio, 1.0, 1e-4);
  s.out_dir = (root / "nothing").string();
  EXPECT_THROW(train_rl(s, rewarder, log), UserError) << "--resume without a checkpoint";
  s.resume = false;
  s.group = 1;
  EXPECT_THROW(train_rl(s, rewarder, log), UserError) << "a group of one compares nothing";
  fs::remove_all(root);
}

// The statistics a step reports are those of the measured scores it saw.
TEST(TrainRl, StatisticsAreThoseOfTheCpuMeasurements) {
  const fs::path root = fs::temp_directory_path() / "dragon_test_rl_measured";
  fs::remove_all(root);
  RlSettings s;
  s.init = write_fixture_model(root);
  s.prompts = (root / "prompts.jsonl").string();
  s.out_dir = (root / "out").string();
  s.steps = 2;
  s.group = 6;
  s.lr = 1e-3;
  s.max_new_tokens = 120;
  s.device = "cpu";
  MeasuredRewarder rewarder(cpu_factory(), s.reward);
  const RlSummary summary = train_rl(s, rewarder, [](const std::string& line) { std::printf("%s\n", line.c_str()); });
  ASSERT_EQ(summary.steps.size(), 2u);
  const RlPrompt prompt{PromptForm::kSpec, "matmul:m=64,n=64,k=64", std::nullopt, ""};
  const double baseline = rewarder.baseline_ms(prompt);
  int64_t verified_total = 0;
  for (const RlStepStats& st : summary.steps) {
    ASSERT_EQ(st.samples, 6);
    double sum = 0, log_speedups = 0;
    int64_t verified = 0;
    for (size_t i = 0; i < st.scores.size(); ++i) {
      const ScoredScript& sc = st.scores[i];
      EXPECT_EQ(st.rewards[i], sc.reward);
      sum += sc.reward;
      if (sc.outcome == RewardOutcome::kVerified) {
        ++verified;
        const double speedup = baseline / *sc.measured->median_ms();
        EXPECT_DOUBLE_EQ(*sc.speedup, speedup);
        EXPECT_DOUBLE_EQ(sc.reward, 1.0 + std::max(-1.0, std::log(speedup)));
        log_speedups += std::log(speedup);
      } else {
        EXPECT_EQ(sc.reward, -1.0) << sc.why;
        std::printf("  step %lld sample %zu %s: %s\n", static_cast<long long>(st.step), i,
                    std::string(reward_outcome_name(sc.outcome)).c_str(), sc.why.substr(0, 160).c_str());
      }
    }
    EXPECT_NEAR(st.mean_reward, sum / 6, 1e-12);
    EXPECT_NEAR(st.correct_rate, verified / 6.0, 1e-12);
    if (verified > 0) {
      EXPECT_NEAR(st.mean_speedup, std::exp(log_speedups / verified), 1e-9);
    }
    verified_total += verified;
  }
  EXPECT_GT(verified_total, 0) << "the fixture writes some scripts that verify";
  EXPECT_TRUE(fs::is_regular_file(root / "out" / "checkpoint.safetensors"));
  fs::remove_all(root);
}

// The command: a short CPU run cut in two by --run-steps and --resume, and a bad prompt
// line named by file and line.
TEST(TrainRl, CommandRunsResumesAndNamesBadInput) {
  const fs::path root = fs::temp_directory_path() / "dragon_test_rl_command";
  fs::remove_all(root);
  const std::string init = write_fixture_model(root);
  const std::string out = (root / "out").string(), log_path = (root / "log").string();
  const std::string base = std::string(DRAGON_BINARY_DIR) + "/dragon train rl --init " + init +
                           " --steps 2 --group 4 --max-tokens 120 --device cpu --target cpu --prompts ";
  auto run = [&](const std::string& args) {
    const int status = std::system((base + args + " > " + log_path + " 2>&1").c_str());
    return std::pair{status, read_text_file(log_path)};
  };
  auto [status, log] = run((root / "prompts.jsonl").string() + " --out " + out + " --run-steps 1");
  ASSERT_EQ(status, 0) << log;
  EXPECT_NE(log.find("step 1/2  reward"), std::string::npos) << log;
  EXPECT_NE(log.find("correct"), std::string::npos) << log;
  EXPECT_EQ(load_progress(read_tensor_file(out + "/checkpoint.safetensors"), "c")->step, 1);
  std::tie(status, log) = run((root / "prompts.jsonl").string() + " --out " + out + " --resume");
  ASSERT_EQ(status, 0) << log;
  EXPECT_NE(log.find("from step 1"), std::string::npos) << log;
  EXPECT_NE(log.find("step 2/2  reward"), std::string::npos) << log;
  EXPECT_EQ(load_progress(read_tensor_file(out + "/checkpoint.safetensors"), "c")->step, 2);
  write_text_file((root / "bad.jsonl").string(), R"({"task": "construction", "workload": "relu"})"
                                                 "\n{\"task\": \"construction\"}\n");
  std::tie(status, log) = run((root / "bad.jsonl").string() + " --out " + (root / "other").string());
  EXPECT_NE(status, 0);
  EXPECT_NE(log.find("bad.jsonl:2: missing 'workload'"), std::string::npos) << log;
  fs::remove_all(root);
}

// Without a GPU, --target cuda is refused before anything is sampled, saying why.
TEST(TrainRl, CudaTargetWithoutAGpuIsRefusedCleanly) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a GPU is here: the CUDA target is usable";
  const fs::path root = fs::temp_directory_path() / "dragon_test_rl_cuda";
  fs::remove_all(root);
  const std::string init = write_fixture_model(root), log_path = (root / "log").string();
  const std::string command = std::string(DRAGON_BINARY_DIR) + "/dragon train rl --init " + init + " --prompts " +
                              (root / "prompts.jsonl").string() + " --out " + (root / "out").string() +
                              " --steps 1 --target cuda > " + log_path + " 2>&1";
  const int status = std::system(command.c_str());
  const std::string log = read_text_file(log_path);
  EXPECT_EQ(WEXITSTATUS(status), 1) << log;
  EXPECT_NE(log.find("train rl --target cuda: "), std::string::npos) << log;
  EXPECT_NE(log.find("needs a CUDA GPU"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(root / "out")) << "nothing written";
  fs::remove_all(root);
}

}  // namespace
}  // namespace dragon::model
