// The line oracle's shortcuts (line_oracle.h: mnemonics known to apply without a trial,
// operands ruled out by a precondition on the operand alone, outcomes decided from the
// operands) must give exactly the answers of trial applications. Along
// real GEMM, conv2d and softmax scripts, every position's options are compared between
// an oracle with the shortcuts and one without, and many Split/Fuse/Reorder instructions
// (valid and invalid), Annotate, GetLoops with counts, samples with decisions, the cache
// primitives, StorageAlign, DecomposeReduction and RFactor are decided both ways; blocks
// and loops ruled out of ComputeInline/ComputeAt/ReverseComputeAt/RFactor fail every trial.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "dragon/decode/constrained_decoder.h"
#include "dragon/ir/op.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/script/tokenizer.h"
#include "line_oracle.h"
#include "workload_traces.h"

namespace dragon::script {
namespace {

using decode::ConstrainedDecoder;
using decode::ConstrainedDecoderSettings;

using decode::LineOracle;
using decode::OracleCounters;
using decode::Options;
using decode::Position;
using decode::ReplayState;
using schedule::Arg;
using schedule::Instruction;
using schedule::InstructionKind;
using schedule::RandomVar;
using schedule::RVType;

// The words the decoder's cursor commits for a canonical line: space-separated, with
// '[' and ']' words of their own.
std::vector<std::string> line_words(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    size_t end = line.find(' ', i);
    if (end == std::string::npos) end = line.size();
    std::string w = line.substr(i, end - i);
    if (!w.empty() && w.front() == '[') {
      out.push_back("[");
      w.erase(0, 1);
    }
    const bool closes = !w.empty() && w.back() == ']';
    if (closes) w.pop_back();
    if (!w.empty()) out.push_back(w);
    if (closes) out.push_back("]");
    i = end + 1;
  }
  return out;
}

void expect_same_options(const Options& fast, const Options& slow, const std::string& where) {
  EXPECT_EQ(fast.words, slow.words) << where;
  EXPECT_EQ(fast.any_int, slow.any_int) << where;
  if (fast.any_int && slow.any_int) {
    EXPECT_EQ(fast.int_lo, slow.int_lo) << where;
    EXPECT_EQ(fast.int_hi, slow.int_hi) << where;
  }
  EXPECT_EQ(fast.any_float, slow.any_float) << where;
  EXPECT_EQ(fast.any_string, slow.any_string) << where;
  EXPECT_EQ(fast.end_line, slow.end_line) << where;
}

std::vector<std::string> script_lines(const std::string& spec, int64_t seed) {
  const std::string text = encode(testing::workload_trace(spec, seed));
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

// Replays `spec`'s script line by line; at each state, `check(state, line)` runs before the
// line is applied.
template <typename Check>
void for_each_state(const std::string& spec, int64_t seed, const Check& check) {
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  auto state = std::make_shared<ReplayState>(schedule::Schedule(func));
  OracleCounters counters;
  for (const std::string& line : script_lines(spec, seed)) {
    check(state, line);
    LineOracle oracle(state, &counters);
    std::optional<Position> pos = Position{};
    for (const std::string& w : line_words(line)) pos = oracle.advance(*pos, w);
    ASSERT_TRUE(pos) << line;
    std::shared_ptr<ReplayState> next;
    ASSERT_TRUE(oracle.line_valid(*pos, &next)) << line;
    state = std::move(next);
  }
}

const char* const kSpecs[] = {"matmul:m=64,n=64,k=64", "conv2d", "softmax:shape=8x256"};

TEST(OracleShortcuts, SameOptionsAsTrialsAtEveryPositionOfRealScripts) {
  int64_t trials_fast = 0, trials_slow = 0, positions = 0;
  for (const char* spec : kSpecs) {
    for_each_state(spec, 1, [&](const std::shared_ptr<ReplayState>& state, const std::string& line) {
      OracleCounters fast_counters, slow_counters;
      LineOracle fast(state, &fast_counters);
      LineOracle slow(state, &slow_counters);
      slow.set_shortcuts(false);
      Position pos;
      for (const std::string& w : line_words(line)) {
        expect_same_options(fast.options(pos), slow.options(pos), std::string(spec) + " at '" + pos.text + "'");
        ++positions;
        auto next = fast.advance(pos, w);
        ASSERT_TRUE(next) << line;
        pos = std::move(*next);
      }
      expect_same_options(fast.options(pos), slow.options(pos), std::string(spec) + " at '" + pos.text + "'");
      trials_fast += fast_counters.trials;
      trials_slow += slow_counters.trials;
    });
  }
  EXPECT_GT(positions, 150);
  // The shortcuts replace trials (otherwise this test would compare nothing new): about
  // 45% fewer here.
  EXPECT_LT(trials_fast * 10, trials_slow * 7);
}

TEST(OracleShortcuts, RuleOutcomesMatchTrials) {
  int64_t decided = 0, applied = 0;
  for (const char* spec : kSpecs) {
    int line = 0;
    for_each_state(spec, 1, [&](const std::shared_ptr<ReplayState>& state, const std::string&) {
      if (line++ % 4 != 0) return;  // every fourth state: each trial costs up to 0.4 ms
      OracleCounters counters;
      LineOracle oracle(state, &counters);
      const auto& loops = state->vars[static_cast<size_t>(RVType::kLoop)];
      const auto& exprs = state->vars[static_cast<size_t>(RVType::kExpr)];
      std::vector<Instruction> insts;
      for (size_t i = 0; i < loops.size(); ++i) {
        const Arg l(loops[i]);
        int64_t extent = 1;
        if (state->sch.is_valid(loops[i])) {
          extent = ir::as_const_int(state->sch.get(schedule::LoopRV{loops[i].id})->extent).value_or(1);
        }
        std::vector<std::vector<Arg>> factor_lists = {
            {}, {Arg(schedule::None{})}, {Arg(schedule::None{}), Arg(schedule::None{})}, {Arg(extent)},
            {Arg(extent - 1)}, {Arg(extent + 1)}, {Arg(int64_t{0}), Arg(schedule::None{})},
            {Arg(int64_t{2}), Arg(schedule::None{})}, {Arg(schedule::None{}), Arg(int64_t{3})},
            {Arg(int64_t{1} << 31)}, {Arg(int64_t{1} << 16), Arg(int64_t{1} << 16)},
            {Arg(int64_t{1} << 20), Arg(schedule::None{})}};
        for (const RandomVar& e : exprs) factor_lists.push_back({Arg(e), Arg(schedule::None{})});
        if (exprs.size() >= 2) factor_lists.push_back({Arg(exprs[0]), Arg(exprs[1])});
        for (const auto& factors : factor_lists) {
          for (bool disable_predication : {false, true}) {
            Instruction inst{InstructionKind::Split, {l}, {Arg(true), Arg(disable_predication)}, {}};
            for (const Arg& f : factors) inst.inputs.push_back(f);
            insts.push_back(inst);
          }
        }
        insts.push_back(Instruction{InstructionKind::Parallel, {l}, {}, {}});
        insts.push_back(Instruction{InstructionKind::Vectorize, {l}, {}, {}});
        for (const char* tag : {"threadIdx.x", "blockIdx.y", "vthread.x", "warp.x"}) {
          insts.push_back(Instruction{InstructionKind::Bind, {l}, {Arg(std::string(tag))}, {}});
        }
        insts.push_back(Instruction{InstructionKind::Fuse, {l}, {Arg(true)}, {}});
        insts.push_back(Instruction{InstructionKind::Fuse, {l, l}, {Arg(false)}, {}});
        insts.push_back(Instruction{InstructionKind::Reorder, {l}, {}, {}});
        for (size_t j = 0; j < loops.size(); ++j) {
          if (j != i) insts.push_back(Instruction{InstructionKind::Fuse, {l, Arg(loops[j])}, {Arg(true)}, {}});
        }
      }
      insts.push_back(Instruction{InstructionKind::Reorder, {}, {}, {}});
      // Reorders of two and three loops: chains, non-chains, binding-order changes.
      for (size_t i = 0; i < loops.size(); ++i) {
        for (size_t j = i >= 3 ? i - 3 : 0; j < std::min(loops.size(), i + 4); ++j) {
          insts.push_back(Instruction{InstructionKind::Reorder, {Arg(loops[i]), Arg(loops[j])}, {}, {}});
          if (i + 2 < loops.size()) {
            insts.push_back(
                Instruction{InstructionKind::Reorder, {Arg(loops[j]), Arg(loops[i + 2]), Arg(loops[i + 1])}, {}, {}});
          }
        }
      }
      // With a decision or a count: (instruction, decision, count).
      std::vector<std::tuple<Instruction, std::optional<Arg>, std::optional<int64_t>>> judged;
      for (const Instruction& inst : insts) judged.emplace_back(inst, std::nullopt, std::nullopt);
      const auto& blocks = state->vars[static_cast<size_t>(RVType::kBlock)];
      std::vector<Arg> targets;
      for (const RandomVar& b : blocks) targets.emplace_back(b);
      for (const RandomVar& l : loops) targets.emplace_back(l);
      insts.push_back(Instruction{InstructionKind::EnterPostproc, {}, {}, {}});
      for (const Arg& t : targets) {
        for (const char* key : {"meta_schedule.tiling_structure", "meta_schedule.cooperative_fetch", "nothing"}) {
          judged.emplace_back(Instruction{InstructionKind::Unannotate, {t}, {Arg(std::string(key))}, {}}, std::nullopt,
                              std::nullopt);
        }
        for (const Arg& value : {Arg(int64_t{7}), Arg(0.5), Arg(std::string("s")), Arg(true)}) {
          judged.emplace_back(Instruction{InstructionKind::Annotate, {t, value}, {Arg(std::string("k"))}, {}},
                              std::nullopt, std::nullopt);
        }
        for (const RandomVar& e : exprs) {
          judged.emplace_back(Instruction{InstructionKind::Annotate, {t, Arg(e)}, {Arg(std::string("k"))}, {}},
                              std::nullopt, std::nullopt);
        }
      }
      for (const RandomVar& b : blocks) {
        for (int64_t count : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}, int64_t{6}}) {
          judged.emplace_back(Instruction{InstructionKind::GetLoops, {Arg(b)}, {}, {}}, std::nullopt, count);
        }
      }
      for (const RandomVar& l : loops) {
        for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}}) {
          for (int64_t max_inner : {int64_t{-1}, int64_t{0}, int64_t{4}}) {
            for (const std::vector<int64_t>& d :
                 std::vector<std::vector<int64_t>>{{}, {1}, {4}, {64}, {1, 1}, {2, 32}, {16, 4}, {3, 5}, {1, 2, 32}, {0, 64}}) {
              judged.emplace_back(Instruction{InstructionKind::SamplePerfectTile, {Arg(l)}, {Arg(n), Arg(max_inner)}, {}},
                                  Arg::int_list(d), std::nullopt);
            }
          }
        }
      }
      for (const auto& [cands, probs] : std::vector<std::pair<std::vector<int64_t>, std::vector<double>>>{
               {{}, {}}, {{1, 2}, {0.5, 0.5}}, {{1, 2}, {0.5}}, {{1, 2}, {0.0, 0.0}}, {{1, 2, 3}, {-1.0, 1.0, 1.0}}}) {
        for (int64_t index : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}}) {
          judged.emplace_back(
              Instruction{InstructionKind::SampleCategorical, {}, {Arg::int_list(cands), Arg::float_list(probs)}, {}},
              Arg(index), std::nullopt);
        }
      }
      for (const auto& [inst, decision, count] : judged) {
        std::optional<bool> rule = oracle.rule_outcome(inst, decision, count);
        if (!rule) continue;
        const bool trial = oracle.trial_outcome(inst, decision, count);
        ++decided;
        applied += trial;
        EXPECT_EQ(*rule, trial) << spec << ": " << schedule::to_string(inst)
                                << (decision ? " = " + schedule::to_string(*decision) : std::string())
                                << (count ? " #" + std::to_string(*count) : std::string());
      }
    });
  }
  // Both outcomes occur often.
  EXPECT_GT(applied, 100);
  EXPECT_GT(decided - applied, 100);
}

// The cache rules (CacheRead, CacheWrite, SetScope: cache_read_write.cc in full) and
// StorageAlign's (storage_align.cc) against trials: every block with buffer indexes in and out of range, storage scopes and not,
// and CacheRead's consumer lists of one or two blocks (other blocks, non-leaves, blocks of
// other scopes or before the writer).
TEST(OracleShortcuts, CacheRuleOutcomesMatchTrials) {
  int64_t decided = 0, applied = 0;
  int64_t decided_by_kind[4] = {0, 0, 0, 0}, applied_by_kind[4] = {0, 0, 0, 0};
  for (const char* spec : kSpecs) {
    int line = 0;
    for_each_state(spec, 1, [&](const std::shared_ptr<ReplayState>& state, const std::string&) {
      if (line++ % 3 != 0) return;
      OracleCounters counters;
      LineOracle oracle(state, &counters);
      const auto& blocks = state->vars[static_cast<size_t>(RVType::kBlock)];
      std::vector<Instruction> insts;
      auto scope_arg = [](const char* s) { return Arg(std::string(s)); };
      for (const RandomVar& b : blocks) {
        const Arg block(b);
        for (int64_t index : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}}) {
          insts.push_back(Instruction{InstructionKind::CacheRead, {block, Arg(Arg::List{})}, {Arg(index), scope_arg("shared")}, {}});
          insts.push_back(Instruction{InstructionKind::CacheWrite, {block}, {Arg(index), scope_arg("local")}, {}});
          insts.push_back(Instruction{InstructionKind::SetScope, {block}, {Arg(index), scope_arg("shared")}, {}});
        }
        insts.push_back(Instruction{InstructionKind::CacheRead, {block, Arg(Arg::List{})}, {Arg(int64_t{0}), scope_arg("texture")}, {}});
        insts.push_back(Instruction{InstructionKind::CacheWrite, {block, Arg(Arg::List{})}, {Arg(int64_t{0}), scope_arg("shared.dyn")}, {}});
        insts.push_back(Instruction{InstructionKind::CacheWrite, {block}, {Arg(int64_t{0}), scope_arg("texture")}, {}});
        insts.push_back(Instruction{InstructionKind::SetScope, {block}, {Arg(int64_t{0}), scope_arg("texture")}, {}});
        // StorageAlign: (buffer index, axis, factor, offset) in and out of range.
        for (const auto& [index, axis, factor, offset] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
                 {0, 0, 1, 0}, {0, 1, 32, 8}, {0, -1, 4, 3}, {0, -2, 2, 1}, {0, -3, 2, 1}, {0, 2, 2, 0}, {0, 0, 0, 0},
                 {0, 0, 4, 4}, {0, 0, 4, -1}, {1, 0, 1, 0}, {-1, 0, 1, 0}}) {
          insts.push_back(Instruction{InstructionKind::StorageAlign, {block}, {Arg(index), Arg(axis), Arg(factor), Arg(offset)}, {}});
        }
        for (const RandomVar& c : blocks) {
          for (int64_t index : {int64_t{0}, int64_t{1}}) {
            insts.push_back(Instruction{InstructionKind::CacheRead, {block, Arg(Arg::List{Arg(c)})}, {Arg(index), scope_arg("shared")}, {}});
          }
          insts.push_back(Instruction{InstructionKind::CacheRead, {block, Arg(Arg::List{block, Arg(c)})}, {Arg(int64_t{0}), scope_arg("local")}, {}});
          insts.push_back(Instruction{InstructionKind::CacheWrite, {block, Arg(Arg::List{Arg(c)})}, {Arg(int64_t{0}), scope_arg("local")}, {}});
        }
      }
      for (const Instruction& inst : insts) {
        std::optional<bool> rule = oracle.rule_outcome(inst);
        if (!rule) continue;
        const bool trial = oracle.trial_outcome(inst);
        const size_t k = inst.kind == InstructionKind::CacheRead    ? 0
                         : inst.kind == InstructionKind::CacheWrite ? 1
                         : inst.kind == InstructionKind::SetScope   ? 2
                                                                    : 3;
        ++decided, ++decided_by_kind[k];
        applied += trial, applied_by_kind[k] += trial;
        EXPECT_EQ(*rule, trial) << spec << ": " << schedule::to_string(inst);
      }
    });
  }
  // Both outcomes occur often, for each kind.
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_GT(applied_by_kind[k], 10) << k;
    EXPECT_GT(decided_by_kind[k] - applied_by_kind[k], 10) << k;
  }
  EXPECT_GT(applied, 100);
  EXPECT_GT(decided - applied, 100);
}

// DecomposeReduction's and RFactor's rules (decompose_reduction.cc, rfactor.cc) against
// trials for every block and loop (RFactor with factor axes in and out of range), and
// RFactor's ruled-out loops (rfactor.cc's preconditions 1, 2, 4 and 5) against
// trials with every factor axis that could apply.
TEST(OracleShortcuts, ReductionRulesMatchTrials) {
  int64_t decided = 0, applied = 0, ruled_out = 0, rfactor_tried = 0, rfactor_decided = 0, rfactor_applied = 0;
  for (const char* spec : kSpecs) {
    int line = 0;
    for_each_state(spec, 1, [&](const std::shared_ptr<ReplayState>& state, const std::string&) {
      if (line++ % 3 != 0) return;
      OracleCounters counters;
      LineOracle oracle(state, &counters);
      const auto& blocks = state->vars[static_cast<size_t>(RVType::kBlock)];
      const auto& loops = state->vars[static_cast<size_t>(RVType::kLoop)];
      for (const RandomVar& b : blocks) {
        for (const RandomVar& l : loops) {
          const Instruction inst{InstructionKind::DecomposeReduction, {Arg(b), Arg(l)}, {}, {}};
          std::optional<bool> rule = oracle.rule_outcome(inst);
          if (!rule) continue;
          const bool trial = oracle.trial_outcome(inst);
          ++decided;
          applied += trial;
          EXPECT_EQ(*rule, trial) << spec << ": " << schedule::to_string(inst);
        }
      }
      for (const RandomVar& l : loops) {
        for (int64_t axis : {int64_t{-4}, int64_t{-3}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}}) {
          const Instruction inst{InstructionKind::RFactor, {Arg(l)}, {Arg(axis)}, {}};
          std::optional<bool> rule = oracle.rule_outcome(inst);
          if (!rule) continue;
          const bool trial = oracle.trial_outcome(inst);
          ++rfactor_decided;
          rfactor_applied += trial;
          EXPECT_EQ(*rule, trial) << spec << ": " << schedule::to_string(inst);
        }
      }
      for (const RandomVar& l : loops) {
        ++rfactor_tried;
        if (!oracle.operand_ruled_out(InstructionKind::RFactor, 0, Arg(l), {})) continue;
        ++ruled_out;
        for (int64_t axis : {int64_t{0}, int64_t{1}, int64_t{-1}}) {
          const Instruction inst{InstructionKind::RFactor, {Arg(l)}, {Arg(axis)}, {}};
          EXPECT_FALSE(oracle.trial_outcome(inst)) << spec << ": " << schedule::to_string(inst);
        }
      }
    });
  }
  EXPECT_GT(applied, 20);
  EXPECT_GT(decided - applied, 100);
  EXPECT_GT(ruled_out, 50);
  EXPECT_GT(rfactor_tried - ruled_out, 0);  // some loops are left to the trial
  EXPECT_GT(rfactor_applied, 20);
  EXPECT_GT(rfactor_decided - rfactor_applied, 100);
}

// Blockize's rule (blockize.cc, its analysis of the bindings repeated) against trials for
// every loop.
TEST(OracleShortcuts, BlockizeRuleMatchesTrials) {
  int64_t decided = 0, applied = 0;
  for (const char* spec : kSpecs) {
    int line = 0;
    for_each_state(spec, 1, [&](const std::shared_ptr<ReplayState>& state, const std::string&) {
      if (line++ % 3 != 0) return;
      OracleCounters counters;
      LineOracle oracle(state, &counters);
      for (const RandomVar& l : state->vars[static_cast<size_t>(RVType::kLoop)]) {
        for (bool preserve_unit_iters : {true, false}) {
          const Instruction inst{InstructionKind::Blockize, {Arg(l)}, {Arg(preserve_unit_iters)}, {}};
          std::optional<bool> rule = oracle.rule_outcome(inst);
          if (!rule) continue;
          const bool trial = oracle.trial_outcome(inst);
          ++decided;
          applied += trial;
          EXPECT_EQ(*rule, trial) << spec << ": " << schedule::to_string(inst);
        }
      }
    });
  }
  EXPECT_GT(applied, 50);
  EXPECT_GT(decided - applied, 50);
}

// Blocks ruled out of ComputeInline (compute_inline.cc's preconditions 1-3) and of
// ComputeAt/ReverseComputeAt (compute_at.cc's 1, 3 and ComputeAt's 4: the root, not one
// write, variables of other kinds, an output block): every trial with them fails.
TEST(OracleShortcuts, RuledOutBlocksFailTrials) {
  int64_t ruled_out[3] = {0, 0, 0}, kept[3] = {0, 0, 0};
  const InstructionKind kinds[3] = {InstructionKind::ComputeInline, InstructionKind::ComputeAt,
                                    InstructionKind::ReverseComputeAt};
  for (const char* spec : kSpecs) {
    int line = 0;
    for_each_state(spec, 1, [&](const std::shared_ptr<ReplayState>& state, const std::string&) {
      if (line++ % 3 != 0) return;
      OracleCounters counters;
      LineOracle oracle(state, &counters);
      const auto& blocks = state->vars[static_cast<size_t>(RVType::kBlock)];
      const auto& loops = state->vars[static_cast<size_t>(RVType::kLoop)];
      for (const RandomVar& b : blocks) {
        if (!state->sch.is_valid(b)) continue;
        for (size_t k = 0; k < 3; ++k) {
          if (!oracle.operand_ruled_out(kinds[k], 0, Arg(b), {})) {
            ++kept[k];
            continue;
          }
          ++ruled_out[k];
          std::vector<Instruction> insts;
          if (k == 0) insts.push_back(Instruction{kinds[k], {Arg(b)}, {}, {}});
          for (size_t i = 0; k > 0 && i < loops.size(); ++i) {
            insts.push_back(Instruction{kinds[k], {Arg(b), Arg(loops[i])}, {Arg(true), Arg(int64_t{-1})}, {}});
          }
          for (const Instruction& inst : insts) {
            EXPECT_FALSE(oracle.trial_outcome(inst)) << spec << ": " << schedule::to_string(inst);
          }
        }
      }
    });
  }
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_GT(ruled_out[k], 10) << k;
    EXPECT_GT(kept[k], 10) << k;
  }
}

// The decoder with every shortcut (and the line-start reuse after lookups and block
// annotations) answers exactly as the decoder that judges everything by trials, token by
// token along real scripts.
TEST(DecoderShortcuts, SameAllowedTokensAsWithoutShortcuts) {
  const Tokenizer& tok = Tokenizer::standard();
  int64_t fast_trials = 0, slow_trials = 0;
  for (const char* spec : kSpecs) {
    const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    const std::vector<TokenId> tokens = tok.encode(encode(testing::workload_trace(spec, 2)));
    ConstrainedDecoder fast(tok, func);
    ConstrainedDecoder slow(tok, func, ConstrainedDecoderSettings{.shortcuts = false});
    for (size_t i = 0; i <= tokens.size(); ++i) {
      const auto prefix = std::span(tokens).first(i);
      ASSERT_EQ(fast.allowed_tokens(prefix), slow.allowed_tokens(prefix)) << spec << " after:\n" << tok.decode(prefix);
    }
    fast_trials += fast.stats().trial_applications;
    slow_trials += slow.stats().trial_applications;
  }
  EXPECT_LT(fast_trials * 3, slow_trials);  // about 4x fewer
}

// The cost guard with the shortcuts: generating the GEMM script of the benchmark token by
// token took 11.4 trial applications per call before them, 1.4 with the first rules and
// 0.40 with the cache, reduction, storage_align and blockize rules.
TEST(DecoderShortcuts, FewTrialApplicationsPerGeneratedToken) {
  const Tokenizer& tok = Tokenizer::standard();
  const std::string spec = "matmul:m=1024,n=1024,k=1024";
  const std::vector<TokenId> tokens = tok.encode(encode(testing::workload_trace(spec, 1)));
  ConstrainedDecoder decoder(tok, ops::OpRegistry::global().make_workload(spec).func);
  for (size_t i = 0; i <= tokens.size(); ++i) ASSERT_FALSE(decoder.allowed_tokens(std::span(tokens).first(i)).empty());
  const double per_call = static_cast<double>(decoder.stats().trial_applications) / static_cast<double>(tokens.size() + 1);
  EXPECT_LT(per_call, 0.7);
}

// Answers do not depend on what was asked before: prefixes asked in a shuffled order
// (most do not extend the one before, so cached lines are dropped and replayed) get the
// answers of a fresh decoder for each prefix.
TEST(DecoderShortcuts, ShuffledPrefixesAnswerAsAFreshDecoder) {
  const Tokenizer& tok = Tokenizer::standard();
  const std::string spec = "matmul:m=96,n=40,k=200";
  const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
  const std::vector<TokenId> tokens = tok.encode(encode(testing::workload_trace(spec, 3)));
  std::vector<size_t> lengths;
  for (size_t i = 0; i <= tokens.size(); i += 5) lengths.push_back(i);
  std::mt19937_64 rng(7);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  ConstrainedDecoder warm(tok, func);
  for (size_t n : lengths) {
    const auto prefix = std::span(tokens).first(n);
    ConstrainedDecoder cold(tok, func);
    ASSERT_EQ(warm.allowed_tokens(prefix), cold.allowed_tokens(prefix)) << "after:\n" << tok.decode(prefix);
  }
  // A prefix that leaves the script, then the script again.
  std::vector<TokenId> off(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(tokens.size() / 2));
  const std::vector<TokenId> after_off = warm.allowed_tokens(off);
  ASSERT_FALSE(after_off.empty());
  off.push_back(after_off.back() == tok.special(SpecialToken::kEos) ? after_off.front() : after_off.back());
  ConstrainedDecoder cold(tok, func);
  EXPECT_EQ(warm.allowed_tokens(off), cold.allowed_tokens(off));
  ConstrainedDecoder cold_again(tok, func);
  EXPECT_EQ(warm.allowed_tokens(tokens), cold_again.allowed_tokens(tokens));
}

}  // namespace
}  // namespace dragon::script
