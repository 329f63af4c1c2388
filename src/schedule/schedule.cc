// The Schedule's core: symbol table, resolution of random variables to IR, and the
// commit step every primitive ends with. Primitives are in primitive/, one file each.
#include "dragon/schedule/schedule.h"

#include <unordered_set>

#include <fmt/format.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/verify.h"
#include "instruction_apply.h"
#include "ir_tree.h"

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

// Every loop variable and block name of a function: what random variables may name.
class NameCollector : public StmtVisitor {
 public:
  std::unordered_set<const VarNode*> loops;
  std::unordered_set<std::string> blocks;

 protected:
  void visit_(const ForNode* op) override {
    loops.insert(op->loop_var.get());
    StmtVisitor::visit_(op);
  }
  void visit_(const BlockNode* op) override {
    blocks.insert(op->name);
    StmtVisitor::visit_(op);
  }
};

}  // namespace

Schedule::Schedule(PrimFunc func, int64_t seed) : original_(func), func_(std::move(func)), rng_(seed) {
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

const Schedule::SymbolEntry& Schedule::entry(RandomVar rv, InstructionKind kind, std::string_view role) const {
  std::string operand = fmt::format("{} {}", role, rv_name(rv));
  if (rv.id < 0 || rv.id >= static_cast<int64_t>(symbols_.size()) || symbols_[rv.id].type != rv.type) {
    throw error(kind, 0, "UnknownRandomVariable", operand, "not a random variable of this schedule");
  }
  const SymbolEntry& e = symbols_[rv.id];
  if (!e.invalidated_by.empty()) {
    std::string what = rv.type == RVType::kLoop ? "loop" : "block";
    throw error(kind, 0, "InvalidatedRandomVariable", operand,
                fmt::format("{} {} was replaced by {}", what, rv_name(rv), e.invalidated_by));
  }
  return e;
}

const BlockNode* Schedule::resolve(BlockRV rv, InstructionKind kind, std::string_view role) const {
  const SymbolEntry& e = entry(rv, kind, role);
  const BlockRealizeNode* realize = detail::find_block_realize(func_, e.block_name);
  if (realize == nullptr) {
    throw error(kind, 0, "BlockNotFound", fmt::format("{} {}", role, rv_name(rv)),
                fmt::format("block '{}' no longer exists", e.block_name));
  }
  return realize->block.get();
}

const ForNode* Schedule::resolve(LoopRV rv, InstructionKind kind, std::string_view role) const {
  const SymbolEntry& e = entry(rv, kind, role);
  const ForNode* loop = detail::find_loop(func_, e.loop_var.get());
  if (loop == nullptr) {
    throw error(kind, 0, "LoopNotFound", fmt::format("{} {}", role, rv_name(rv)),
                fmt::format("loop '{}' no longer exists", e.loop_var.name()));
  }
  return loop;
}

int64_t Schedule::resolve(ExprRV rv, InstructionKind kind, std::string_view role) const {
  return entry(rv, kind, role).value;
}

// Public resolution reports failures as the lookup GetLoops would (precondition 0).
const BlockNode* Schedule::get(BlockRV rv) const { return resolve(rv, InstructionKind::GetBlock, "block"); }
const ForNode* Schedule::get(LoopRV rv) const { return resolve(rv, InstructionKind::GetLoops, "loop"); }
int64_t Schedule::get(ExprRV rv) const { return resolve(rv, InstructionKind::SampleCategorical, "value"); }

// The checks of entry() and resolve() without building their errors: search and
// constrained decoding ask this often, and most answers are "no".
bool Schedule::is_valid(RandomVar rv) const {
  if (rv.id < 0 || rv.id >= static_cast<int64_t>(symbols_.size())) return false;
  const SymbolEntry& e = symbols_[rv.id];
  if (e.type != rv.type || !e.invalidated_by.empty()) return false;
  switch (rv.type) {
    case RVType::kBlock: return detail::find_block_realize(func_, e.block_name) != nullptr;
    case RVType::kLoop: return detail::find_loop(func_, e.loop_var.get()) != nullptr;
    case RVType::kExpr: return true;
  }
  return false;
}

void Schedule::record(Instruction inst, std::optional<Arg> decision) { trace_.append(std::move(inst), std::move(decision)); }

void Schedule::commit(PrimFunc func, Instruction inst) {
  if (ir_checks_enabled()) {
    check_well_formed(func, fmt::format("after {}", instruction_kind_name(inst.kind)));
  }
  // Random variables whose loop or block disappeared now say which instruction did it.
  NameCollector names;
  names.visit(func->body);
  for (SymbolEntry& e : symbols_) {
    if (!e.invalidated_by.empty()) continue;
    bool gone = (e.type == RVType::kLoop && !names.loops.count(e.loop_var.get())) ||
                (e.type == RVType::kBlock && !names.blocks.count(e.block_name));
    if (gone) e.invalidated_by = std::string(instruction_kind_name(inst.kind));
  }
  func_ = std::move(func);
  trace_.append(std::move(inst));
}

ScheduleError Schedule::error(InstructionKind kind, int k, std::string error_name, std::string operand,
                              std::string reason, ErrorLocus locus) const {
  return ScheduleError(kind, k, std::move(error_name), std::move(operand), std::move(reason), func_,
                       std::move(locus));
}

void Schedule::enter_postproc() { record(Instruction{InstructionKind::EnterPostproc, {}, {}, {}}); }

Schedule replay(const Trace& trace, const PrimFunc& func, int64_t seed) {
  Schedule sch(func, seed);
  trace.apply_to(sch);
  return sch;
}

namespace detail {

std::vector<RandomVar> apply_enter_postproc(Schedule& sch, const std::vector<Arg>& inputs,
                                            const std::vector<Arg>& attrs, const std::optional<Arg>&) {
  expect_count(InstructionKind::EnterPostproc, "inputs", inputs, 0);
  expect_count(InstructionKind::EnterPostproc, "attrs", attrs, 0);
  sch.enter_postproc();
  return {};
}

}  // namespace detail
}  // namespace dragon::schedule
