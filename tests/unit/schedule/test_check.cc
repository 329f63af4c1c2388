// Schedule::check must agree with applying the instruction (apply_instruction, replay's
// path): on random schedules of several workloads (and those with cached producers
// blockized: blocks inside blocks), for instructions of every kind over
// the schedule's blocks, loops, values and location marks (valid, refused and malformed
// operands alike), the check says kApplies exactly when applying succeeds, with the same
// outputs and recorded decision, and kFails otherwise with the primitive's error. With
// operands of a well-formed instruction left unknown, kFails must mean it fails and
// kApplies that it applies. The constrained decoder trusts these answers in place of applications.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dragon/ir/op.h"
#include "dragon/ops/op_registry.h"
#include "dragon/schedule/apply_instruction.h"
#include "dragon/schedule/instruction_signature.h"
#include "dragon/schedule/tensor_intrin.h"
#include "random_trace.h"

namespace dragon::schedule {
namespace {

struct Outcome {
  bool applied = false;
  std::optional<ScheduleError> error;
  size_t outputs = 0;
  std::optional<Arg> decision;
};

Outcome apply_copy(const Schedule& sch, const Instruction& inst, const std::optional<Arg>& decision) {
  Schedule copy = sch.copy();
  Outcome out;
  try {
    out.outputs = apply_instruction(copy, inst, decision).size();
    out.applied = true;
    if (decision) out.decision = copy.trace().decision(copy.trace().size() - 1);
  } catch (const ScheduleError& e) {
    out.error = e;
  } catch (const std::exception&) {
  }
  return out;
}

// Instructions of every kind over the schedule's variables.
struct Candidate {
  Instruction inst;
  std::optional<Arg> decision;
};

// Instructions of each kind that candidates() lists none of, drawn from the kind's
// declaration alone (operand values by slot type, without decisions): a new kind is held
// to applying with no line here; its own tests choose the operands that matter.
void add_from_declarations(std::vector<Candidate>& out, const std::vector<Arg>& blocks,
                           const std::vector<Arg>& loops, const std::vector<Arg>& exprs) {
  std::set<InstructionKind> listed;
  for (const Candidate& c : out) listed.insert(c.inst.kind);
  std::vector<Arg> blocks_or_loops = blocks;
  blocks_or_loops.insert(blocks_or_loops.end(), loops.begin(), loops.end());
  const Arg kNone = Arg(None{});
  auto pool = [&](ValueType type) -> std::vector<Arg> {
    switch (type) {
      case ValueType::kBlock: return blocks;
      case ValueType::kLoop: return loops;
      case ValueType::kExpr: return exprs;
      case ValueType::kBlockOrLoop: return blocks_or_loops;
      case ValueType::kInt: return {Arg(int64_t{-1}), Arg(int64_t{0}), Arg(int64_t{1}), Arg(int64_t{2})};
      case ValueType::kFloat: return {Arg(0.5), Arg(1.0)};
      case ValueType::kBool: return {Arg(true), Arg(false)};
      case ValueType::kString:
      case ValueType::kEnum: return {Arg("x"), Arg("shared"), Arg("threadIdx.x")};
      case ValueType::kSplitFactor: return {kNone, Arg(int64_t{2}), exprs.front()};
      case ValueType::kAnnValue: return {Arg(int64_t{1}), exprs.front()};
      case ValueType::kOptionalNumber: return {kNone, Arg(int64_t{0})};
      case ValueType::kCount: return {};
    }
    return {};
  };
  std::mt19937 rng(7);
  auto pick = [&](ValueType type) {
    std::vector<Arg> values = pool(type);
    return values.empty() ? kNone : values[rng() % values.size()];
  };
  for (int k = 0; k < kNumInstructionKinds; ++k) {
    const auto kind = static_cast<InstructionKind>(k);
    if (listed.count(kind) != 0) continue;
    for (int draw = 0; draw < 24; ++draw) {
      Instruction inst{kind, {}, {}, {}};
      for (const SlotSignature& slot : instruction_signature(kind).slots) {
        if (slot.source == SlotSource::kOutputCount) continue;
        std::vector<Arg> values;
        const size_t n = slot.shape == SlotShape::kSingle ? 1 : rng() % 3;
        for (size_t i = 0; i < n; ++i) values.push_back(pick(slot.type));
        std::vector<Arg>& where = slot.source == SlotSource::kAttr ? inst.attrs : inst.inputs;
        if (slot.source == SlotSource::kInputsFrom) {
          where.insert(where.end(), values.begin(), values.end());
        } else if (slot.shape == SlotShape::kSingle) {
          where.push_back(values.front());
        } else {
          where.emplace_back(Arg::List(values.begin(), values.end()));
        }
      }
      out.push_back(Candidate{std::move(inst), std::nullopt});
    }
  }
}

std::vector<Candidate> candidates(Schedule& sch) {
  using K = InstructionKind;
  std::vector<Arg> blocks, loops, exprs, marks;
  for (const ir::BlockTree::BlockInfo& info : sch.tree().blocks()) {
    const BlockRV b = sch.get_block(info.block->name);
    blocks.emplace_back(b);
    for (LoopRV l : sch.get_loops(b)) loops.emplace_back(l);
  }
  for (const Arg& b : blocks) {
    try {
      marks.emplace_back(sch.sample_compute_location(BlockRV{b.as<RandomVar>()->id}));
    } catch (const ScheduleError&) {
    }
  }
  if (!loops.empty()) {
    for (ExprRV v : sch.sample_perfect_tile(LoopRV{loops.back().as<RandomVar>()->id}, 2, -1)) exprs.emplace_back(v);
  }
  exprs.emplace_back(sch.sample_categorical({0, 3}, {0.5, 0.5}, 1));
  std::vector<Arg> all_loops = loops;
  all_loops.insert(all_loops.end(), marks.begin(), marks.end());
  std::vector<Candidate> out;
  auto add = [&](K kind, std::vector<Arg> inputs, std::vector<Arg> attrs, std::optional<Arg> decision = std::nullopt) {
    out.push_back(Candidate{Instruction{kind, std::move(inputs), std::move(attrs), {}}, std::move(decision)});
  };
  const Arg kTrue(true), kFalse(false), kNone = Arg(None{});
  add(K::GetBlock, {}, {Arg("nothing"), Arg("main")});
  add(K::EnterPostproc, {}, {});
  add(K::Split, {}, {kTrue, kFalse});           // malformed: no loop
  add(K::Fuse, {}, {kTrue});                    // no loops
  add(K::Reorder, {}, {});
  for (const auto& [c, p] : std::vector<std::pair<std::vector<int64_t>, std::vector<double>>>{
           {{}, {}}, {{1, 2}, {0.5, 0.5}}, {{1, 2}, {0.5}}, {{1, 2}, {0.0, 0.0}}}) {
    for (int64_t index : {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}}) {
      add(K::SampleCategorical, {}, {Arg::int_list(c), Arg::float_list(p)}, Arg(index));
    }
  }
  for (const Arg& b : blocks) {
    const std::string name = sch.get(BlockRV{b.as<RandomVar>()->id})->name;
    add(K::GetBlock, {}, {Arg(name), Arg("main")});
    add(K::GetLoops, {b}, {});
    add(K::GetChildBlocks, {b}, {});
    add(K::GetProducers, {b}, {});
    add(K::GetConsumers, {b}, {});
    add(K::SampleComputeLocation, {b}, {});
    for (int64_t d : {int64_t{-2}, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{3}}) {
      add(K::SampleComputeLocation, {b}, {}, Arg(d));
    }
    add(K::AddUnitLoop, {b}, {});
    add(K::ComputeInline, {b}, {});
    add(K::ReverseComputeInline, {b}, {});
    add(K::Unannotate, {b}, {Arg("nothing")});
    add(K::Annotate, {b, Arg(int64_t{3})}, {Arg("k")});
    add(K::Annotate, {b, exprs.front()}, {Arg("k")});
    for (int64_t index : {int64_t{-1}, int64_t{0}, int64_t{1}}) {
      add(K::CacheRead, {b, Arg(Arg::List{})}, {Arg(index), Arg("shared")});
      add(K::CacheWrite, {b}, {Arg(index), Arg("local")});
      add(K::SetScope, {b}, {Arg(index), Arg("shared")});
      add(K::StorageAlign, {b}, {Arg(index), Arg(int64_t{0}), Arg(int64_t{4}), Arg(int64_t{1})});
      for (int64_t type : {int64_t{0}, int64_t{1}}) {
        for (const char* map : {"lambda i, j: (j, i)", "lambda i: (i,)", "lambda i, j: (i * 0, j * 0)"}) {
          add(K::TransformLayout, {b, Arg(map)}, {Arg(index), Arg(type), kNone, kFalse});
        }
        add(K::ReIndex, {b}, {Arg(index), Arg(type)});
      }
    }
    for (const char* map : {"lambda i, j: (j, i)", "lambda i, j, k: (j, i, k)", "lambda i, j, k: (i * 8 + j, k)",
                            "lambda i, j, k: (i * 6 + k, j)", "lambda i, j, k: (i, j // 2, k)"}) {
      add(K::TransformBlockLayout, {b}, {Arg(map)});
    }
    for (const std::vector<int64_t>& padding : std::vector<std::vector<int64_t>>{
             {}, {16}, {1, 1}, {16, 8}, {4, 4, 4}, {16, 8, 16}, {1, 0, 1}, {2, 2, 2, 2}}) {
      add(K::PadEinsum, {b}, {Arg::int_list(padding)});
    }
    add(K::CacheRead, {b, Arg(Arg::List{})}, {Arg(int64_t{0}), Arg("texture")});
    add(K::CacheWrite, {b, Arg(Arg::List{b})}, {Arg(int64_t{0}), Arg("local")});  // malformed
    add(K::StorageAlign, {b}, {Arg(int64_t{0}), Arg(int64_t{1}), Arg(int64_t{0}), Arg(int64_t{0})});
    for (const Arg& c : blocks) add(K::CacheRead, {b, Arg(Arg::List{c})}, {Arg(int64_t{0}), Arg("local")});
    for (const char* intrin : {"x", "mma_m16n8k16_f16f16f32"}) add(K::Tensorize, {b}, {Arg(intrin), kTrue});
    for (const Arg& l : all_loops) {
      for (int64_t index : {int64_t{-1}, int64_t{-2}, int64_t{0}, int64_t{2}}) {
        add(K::ComputeAt, {b, l}, {kTrue, Arg(index)});
        add(K::ReverseComputeAt, {b, l}, {kTrue, Arg(index)});
      }
      add(K::DecomposeReduction, {b, l}, {});
    }
  }
  for (size_t i = 0; i < all_loops.size(); ++i) {
    const Arg& l = all_loops[i];
    int64_t extent = 1;
    if (const auto* rv = l.as<RandomVar>(); sch.is_valid(*rv)) {
      extent = ir::as_const_int(sch.get(LoopRV{rv->id})->extent).value_or(1);
    }
    for (const std::vector<Arg>& factors :
         std::vector<std::vector<Arg>>{{}, {kNone}, {kNone, kNone}, {Arg(extent)}, {Arg(extent + 1)},
                                       {Arg(int64_t{2}), kNone}, {exprs.front(), kNone}, {Arg(int64_t{0})}}) {
      for (bool disable : {false, true}) {
        std::vector<Arg> inputs{l};
        inputs.insert(inputs.end(), factors.begin(), factors.end());
        add(K::Split, inputs, {kTrue, Arg(disable)});
      }
    }
    add(K::Split, {l, kNone}, {kTrue});  // one attr: TVM v0.12-0.16
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2}}) {
      for (int64_t max_inner : {int64_t{-1}, int64_t{0}}) {
        add(K::SamplePerfectTile, {l}, {Arg(n), Arg(max_inner)});
        add(K::SamplePerfectTile, {l}, {Arg(n), Arg(max_inner)}, Arg::int_list({extent}));
        add(K::SamplePerfectTile, {l}, {Arg(n), Arg(max_inner)}, Arg::int_list({1, extent}));
        add(K::SamplePerfectTile, {l}, {Arg(n), Arg(max_inner)}, Arg::int_list({3, 2}));
      }
    }
    add(K::Parallel, {l}, {});
    add(K::Vectorize, {l}, {});
    add(K::Unroll, {l}, {});
    for (const char* tag : {"threadIdx.x", "blockIdx.y", "warp.x"}) add(K::Bind, {l}, {Arg(tag)});
    add(K::Annotate, {l, Arg(0.5)}, {Arg("k")});
    add(K::Unannotate, {l}, {Arg("nothing")});
    add(K::AddUnitLoop, {l}, {});
    add(K::GetChildBlocks, {l}, {});
    add(K::Blockize, {l}, {kTrue});
    add(K::Tensorize, {l}, {Arg("mma_m16n8k16_f16f16f32"), kTrue});
    for (int64_t axis : {int64_t{-3}, int64_t{0}, int64_t{1}, int64_t{3}}) add(K::RFactor, {l}, {Arg(axis)});
    add(K::Fuse, {l}, {kTrue});
    add(K::Reorder, {l}, {});
    if (i + 1 < all_loops.size()) {
      add(K::Fuse, {l, all_loops[i + 1]}, {kTrue});
      add(K::Fuse, {l, l}, {kTrue});
      add(K::Reorder, {all_loops[i + 1], l}, {});
    }
    if (i + 2 < all_loops.size()) add(K::Reorder, {all_loops[i + 2], l, all_loops[i + 1]}, {});
    add(K::Split, {blocks.front(), kNone}, {kTrue, kFalse});  // malformed: a block as the loop
  }
  add_from_declarations(out, blocks, all_loops, exprs);
  return out;
}

// The masks a line of a script leaves unknown while it is written: every operand after
// the first few (inputs first, then attrs), and each single operand.
std::vector<KnownOperands> partial_masks(const Instruction& inst) {
  std::vector<KnownOperands> masks;
  const size_t inputs = inst.inputs.size(), attrs = inst.attrs.size();
  for (size_t k = 0; k < inputs + attrs; ++k) {
    KnownOperands known;
    known.inputs = k < inputs ? (uint64_t{1} << k) - 1 : ~uint64_t{0};
    known.attrs = k < inputs ? 0 : (uint64_t{1} << (k - inputs)) - 1;
    masks.push_back(known);
  }
  for (size_t i = 0; i < inputs; ++i) masks.push_back(KnownOperands{~(uint64_t{1} << i), ~uint64_t{0}});
  for (size_t i = 0; i < attrs; ++i) masks.push_back(KnownOperands{~uint64_t{0}, ~(uint64_t{1} << i)});
  return masks;
}

struct Tally {
  int applied = 0;
  int failed = 0;
  int partial_decided = 0;
  std::map<InstructionKind, int> applied_by_kind, failed_by_kind;
};

void compare(Schedule& sch, const std::string& label, Tally& tally) {
  for (const Candidate& c : candidates(sch)) {
    const std::string where = label + ": " + to_string(c.inst) +
                              (c.decision ? " = " + to_string(*c.decision) : std::string());
    const size_t trace_before = sch.trace().size();
    const CheckResult checked = sch.check(c.inst, c.decision);
    ASSERT_EQ(sch.trace().size(), trace_before) << where << ": the check recorded an instruction";
    const Outcome real = apply_copy(sch, c.inst, c.decision);
    ASSERT_NE(checked.verdict, Verdict::kUnknown) << where;
    ASSERT_EQ(checked.verdict == Verdict::kApplies, real.applied) << where;
    if (real.applied) {
      ++tally.applied;
      ++tally.applied_by_kind[c.inst.kind];
      EXPECT_EQ(checked.outputs, real.outputs) << where;
      if (c.decision) {
        EXPECT_EQ(checked.decision, real.decision) << where;
      }
    } else {
      ++tally.failed;
      ++tally.failed_by_kind[c.inst.kind];
      ASSERT_EQ(checked.error.has_value(), real.error.has_value()) << where;
      if (real.error) {
        EXPECT_EQ(checked.error->kind(), real.error->kind()) << where;
        EXPECT_EQ(checked.error->precondition(), real.error->precondition()) << where;
        EXPECT_EQ(checked.error->error_name(), real.error->error_name()) << where;
        EXPECT_EQ(checked.error->reason(), real.error->reason()) << where;
      }
    }
    // A malformed operand fails replay whatever the others hold; left unknown, it is taken
    // for a well-formed one, so only well-formed instructions judge partial answers.
    if (!real.applied && !real.error) continue;
    for (const KnownOperands& known : partial_masks(c.inst)) {
      const Verdict partial = sch.check(c.inst, c.decision, known).verdict;
      if (partial == Verdict::kUnknown) continue;
      ++tally.partial_decided;
      EXPECT_EQ(partial == Verdict::kApplies, real.applied)
          << where << " with operands unknown (inputs mask " << known.inputs << ", attrs mask " << known.attrs << ")";
    }
  }
}

// Blocks inside blocks next to blocks that may be folded into them: each leaf block's
// first write cached (a copy block after it, which reverse_compute_inline may fold back
// into it), then the innermost loop of each block so cached blockized, where those
// apply. An outer block's regions summarise its leaves; a precondition that looks at
// leaves alone misses them (reverse_compute_inline into a blockized producer left the
// outer block's region naming the buffer it removed, while the check accepted it).
void nest_cached_producers(Schedule& sch) {
  std::vector<std::string> leaves;
  for (const ir::BlockTree::BlockInfo& info : sch.tree().blocks()) {
    if (info.realize != nullptr && info.leaf) leaves.push_back(info.block->name);
  }
  std::vector<std::string> cached;
  for (const std::string& name : leaves) {
    try {
      sch.cache_write(sch.get_block(name), 0, "local");
      cached.push_back(name);
    } catch (const ScheduleError&) {
    }
  }
  for (const std::string& name : cached) {
    const std::vector<LoopRV> loops = sch.get_loops(sch.get_block(name));
    if (loops.empty()) continue;
    try {
      sch.blockize(loops.back());
    } catch (const ScheduleError&) {
    }
  }
}

TEST(Check, AgreesWithApplyingOnRandomSchedules) {
  Tally tally;
  for (const char* spec : {"matmul:m=12,n=8,k=6", "softmax:shape=4x16", "conv2d", "layer_norm:shape=3x4x10"}) {
    const ir::PrimFunc func = ops::OpRegistry::global().make_workload(spec).func;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      testing::RandomTraceOptions options;
      options.steps = 6;
      Schedule sch = testing::random_schedule(func, seed, options);
      compare(sch, std::string(spec) + " seed " + std::to_string(seed), tally);
      if (HasFatalFailure()) return;
      nest_cached_producers(sch);
      compare(sch, std::string(spec) + " seed " + std::to_string(seed) + ", cached producers blockized", tally);
      if (HasFatalFailure()) return;
    }
  }
  // Both outcomes of every kind occur (the schedules are small: some kinds apply rarely).
  for (int k = 0; k < kNumInstructionKinds; ++k) {
    const auto kind = static_cast<InstructionKind>(k);
    EXPECT_GT(tally.failed_by_kind[kind] + tally.applied_by_kind[kind], 0) << instruction_kind_name(kind);
  }
  EXPECT_GT(tally.applied, 500);
  EXPECT_GT(tally.failed, 500);
  EXPECT_GT(tally.partial_decided, 1000);
}

}  // namespace
}  // namespace dragon::schedule
