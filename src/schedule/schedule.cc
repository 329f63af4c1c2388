// The Schedule's core: symbol table, resolution of random variables to IR, and the
// commit step every primitive ends with. Primitives are in primitive/, one file each.
#include "dragon/schedule/schedule.h"

#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/buffer_dim_align.h"
#include "dragon/ir/verify.h"
#include "dragon/schedule/tensor_intrin.h"
#include "instruction_apply.h"
#include "instruction_check.h"
#include "plan_memo.h"
#include "planned.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Marks the start of postprocessing in the trace; changes no IR.
  void enter_postproc();
  CheckResult check_enter_postproc(const detail::CheckedOperands& ops) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

Schedule::Schedule(PrimFunc func, int64_t seed)
    : original_(func),
      func_(std::move(func)),
      tree_(std::make_shared<const BlockTree>(func_)),
      memo_(std::make_shared<detail::PlanMemo>()),
      rng_(seed) {
  DRAGON_CHECK(func_.defined() && func_.root_block() != nullptr, "a schedule needs a function with a root block");
}

RandomVar Schedule::new_rv(SymbolEntry entry) {
  RandomVar rv{entry.type, static_cast<int64_t>(symbols_.size())};
  symbols_.push_back(std::move(entry));
  return rv;
}

BlockRV Schedule::new_block_rv(std::string name) {
  SymbolEntry e;
  e.type = RVType::kBlock;
  e.block_name = std::move(name);
  return BlockRV{new_rv(std::move(e)).id};
}

LoopRV Schedule::new_loop_rv(Var var) {
  SymbolEntry e;
  e.type = RVType::kLoop;
  e.loop_var = std::move(var);
  return LoopRV{new_rv(std::move(e)).id};
}

ExprRV Schedule::new_expr_rv(int64_t value) {
  SymbolEntry e;
  e.type = RVType::kExpr;
  e.value = value;
  return ExprRV{new_rv(std::move(e)).id};
}

detail::Planned<const Schedule::SymbolEntry*> Schedule::entry(RandomVar rv, InstructionKind kind,
                                                              std::string_view role) const {
  if (rv.id < 0 || rv.id >= static_cast<int64_t>(symbols_.size()) || symbols_[rv.id].type != rv.type) {
    return error(
        kind, 0, "UnknownRandomVariable", [&] { return fmt::format("{} {}", role, rv_name(rv)); },
        "not a random variable of this schedule");
  }
  const SymbolEntry& e = symbols_[rv.id];
  if (!e.invalidated_by.empty()) {
    std::string what = rv.type == RVType::kLoop ? "loop" : "block";
    return error(
        kind, 0, "InvalidatedRandomVariable", [&] { return fmt::format("{} {}", role, rv_name(rv)); },
        [&] { return fmt::format("{} {} was replaced by {}", what, rv_name(rv), e.invalidated_by); });
  }
  return &e;
}

detail::Planned<const BlockNode*> Schedule::find(BlockRV rv, InstructionKind kind, std::string_view role) const {
  auto e = entry(rv, kind, role);
  if (!e.ok()) return std::move(e).take_error();
  const BlockTree::BlockInfo* info = tree_->named((*e)->block_name);
  if (info == nullptr || info->realize == nullptr) {
    return error(
        kind, 0, "BlockNotFound", [&] { return fmt::format("{} {}", role, rv_name(rv)); },
        [&] { return fmt::format("block '{}' no longer exists", (*e)->block_name); });
  }
  return info->block;
}

detail::Planned<const ForNode*> Schedule::find(LoopRV rv, InstructionKind kind, std::string_view role) const {
  auto e = entry(rv, kind, role);
  if (!e.ok()) return std::move(e).take_error();
  const BlockTree::LoopInfo* info = tree_->loop_of((*e)->loop_var.get());
  if (info == nullptr) {
    return error(
        kind, 0, "LoopNotFound", [&] { return fmt::format("{} {}", role, rv_name(rv)); },
        [&] { return fmt::format("loop '{}' no longer exists", (*e)->loop_var.name()); });
  }
  return info->loop;
}

detail::Planned<int64_t> Schedule::find(ExprRV rv, InstructionKind kind, std::string_view role) const {
  auto e = entry(rv, kind, role);
  if (!e.ok()) return std::move(e).take_error();
  return (*e)->value;
}

const BlockNode* Schedule::resolve(BlockRV rv, InstructionKind kind, std::string_view role) const {
  return find(rv, kind, role).take();
}

const ForNode* Schedule::resolve(LoopRV rv, InstructionKind kind, std::string_view role) const {
  return find(rv, kind, role).take();
}

int64_t Schedule::resolve(ExprRV rv, InstructionKind kind, std::string_view role) const {
  return find(rv, kind, role).take();
}

// Public resolution reports failures as the lookup GetLoops would (precondition 0).
const BlockNode* Schedule::get(BlockRV rv) const { return resolve(rv, InstructionKind::GetBlock, "block"); }
const ForNode* Schedule::get(LoopRV rv) const { return resolve(rv, InstructionKind::GetLoops, "loop"); }
int64_t Schedule::get(ExprRV rv) const { return resolve(rv, InstructionKind::SampleCategorical, "value"); }

// The checks of entry() and find() without building their errors: search and
// constrained decoding ask this often, and most answers are "no".
bool Schedule::is_valid(RandomVar rv) const {
  if (rv.id < 0 || rv.id >= static_cast<int64_t>(symbols_.size())) return false;
  const SymbolEntry& e = symbols_[rv.id];
  if (e.type != rv.type || !e.invalidated_by.empty()) return false;
  switch (rv.type) {
    case RVType::kBlock: {
      const BlockTree::BlockInfo* info = tree_->named(e.block_name);
      return info != nullptr && info->realize != nullptr;
    }
    case RVType::kLoop:
      return tree_->loop_of(e.loop_var.get()) != nullptr;
    case RVType::kExpr: return true;
  }
  return false;
}

std::optional<int64_t> Schedule::location_mark(LoopRV rv) const {
  // A loop entry without a loop variable whose value is the mark (sampling.cc makes them).
  if (rv.id < 0 || rv.id >= static_cast<int64_t>(symbols_.size())) return std::nullopt;
  const SymbolEntry& e = symbols_[rv.id];
  if (e.type != RVType::kLoop || e.loop_var.defined()) return std::nullopt;
  return e.value;
}

bool Schedule::has_location_marks() const {
  return std::any_of(symbols_.begin(), symbols_.end(),
                     [](const SymbolEntry& e) { return e.type == RVType::kLoop && !e.loop_var.defined(); });
}

void Schedule::record(Instruction inst, std::optional<Arg> decision) { trace_.append(std::move(inst), std::move(decision)); }

void Schedule::commit(PrimFunc func, Instruction inst) {
  if (ir_checks_enabled()) {
    check_well_formed(func, fmt::format("after {}", instruction_kind_name(inst.kind)));
  }
  // Random variables whose loop or block disappeared now say which instruction did it.
  auto tree = std::make_shared<const BlockTree>(func);
  for (SymbolEntry& e : symbols_) {
    if (!e.invalidated_by.empty()) continue;
    bool gone = (e.type == RVType::kLoop && tree->loop_of(e.loop_var.get()) == nullptr) ||
                (e.type == RVType::kBlock && tree->named(e.block_name) == nullptr);
    if (gone) e.invalidated_by = std::string(instruction_kind_name(inst.kind));
  }
  func_ = std::move(func);
  tree_ = std::move(tree);
  trace_.append(std::move(inst));
}

void Schedule::enter_postproc() { record(detail::make_instruction(InstructionKind::EnterPostproc, {})); }

CheckResult Schedule::check_enter_postproc(const detail::CheckedOperands& ops) const {
  ops.expect(0, 0);
  return CheckResult{Verdict::kApplies, std::nullopt, 0, std::nullopt};
}

bool block_annotation_is_read(std::string_view key) {
  return key == kBufferDimAlignKey || key == kTensorIntrinAnnotation;
}

Schedule replay(const Trace& trace, const PrimFunc& func, int64_t seed) {
  Schedule sch(func, seed);
  trace.apply_to(sch);
  return sch;
}

namespace detail {

constinit const InstructionSignature kEnterPostprocSignature{
    .python_name = "enter_postproc",
    .replay = replay_method<&Schedule::enter_postproc>,
    .check = check_method<&Schedule::check_enter_postproc>,
};

}  // namespace detail
}  // namespace dragon::schedule
