// The semantic half of constrained decoding (line_oracle.h): reading committed words
// into slot values, and deciding which completions of a partial line apply, by trying
// them on a scratch copy of the replayed schedule. The completions tried per slot are
// chosen so that if any completion applies, one of them does (the argument for each
// kind is in src/script/tokenizer/README.md). Trials that a rule decides without applying
// anything are in line_oracle_rules.cc.
#include "line_oracle.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/schedule/apply_instruction.h"
#include "dragon/schedule/schedule_error.h"
#include "dragon/schedule/tensor_intrin.h"
#include "script_words.h"

namespace dragon::script::decoding {

using schedule::Arg;
using schedule::InstructionKind;
using schedule::RandomVar;
using schedule::RVType;

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
// The most tiles SamplePerfectTile is offered (an approximation: replay takes any n).
constexpr int64_t kMaxTiles = 16;

class BlockNames : public ir::StmtVisitor {
 public:
  std::vector<std::string> names;
  // Per block, the loops above it (up to the root).
  std::unordered_map<const ir::BlockNode*, std::vector<const ir::ForNode*>> loops_above;
  void visit_(const ir::ForNode* op) override {
    stack_.push_back(op);
    ir::StmtVisitor::visit_(op);
    stack_.pop_back();
  }
  // Per block, how many loops lie between it and its enclosing block (what GetLoops
  // returns).
  std::unordered_map<const ir::BlockNode*, size_t> loops_in_scope;
  // Blocks with no enclosing block (the root): no scope to compute anything in.
  std::unordered_set<const ir::BlockNode*> top_level;
  // Per block, its realization (the bindings of its iteration variables).
  std::unordered_map<const ir::BlockNode*, const ir::BlockRealizeNode*> realize_of;
  void visit_(const ir::BlockRealizeNode* op) override {
    realize_of.emplace(op->block.get(), op);
    ir::StmtVisitor::visit_(op);
  }
  void visit_(const ir::BlockNode* op) override {
    names.push_back(op->name);
    loops_above.emplace(op, stack_);
    loops_in_scope.emplace(op, stack_.size() - (block_depth_.empty() ? 0 : block_depth_.back()));
    if (block_depth_.empty()) top_level.insert(op);
    if (!blocks_.empty()) {
      non_leaf.insert(blocks_.back());
      parent.emplace(op, blocks_.back());
      top_index.emplace(op, top_index_.back());
    }
    block_in_init |= init_depth_ > 0;
    block_depth_.push_back(stack_.size());
    blocks_.push_back(op);
    top_index_.push_back(0);
    // The walk of StmtVisitor::visit_(BlockNode) (the ranges hold no statements), keeping
    // which top-level statement of the block's body is being visited.
    if (op->init.defined()) {
      ++init_depth_;
      visit(op->init);
      --init_depth_;
    }
    if (const auto* seq = op->body.as<ir::SeqStmtNode>()) {
      for (size_t i = 0; i < seq->seq.size(); ++i) {
        top_index_.back() = i;
        visit(seq->seq[i]);
      }
    } else {
      visit(op->body);
    }
    top_index_.pop_back();
    blocks_.pop_back();
    block_depth_.pop_back();
  }
  // Blocks with another block inside.
  std::unordered_set<const ir::BlockNode*> non_leaf;
  // Per block below another: its enclosing block (the scope block) and which top-level
  // statement of that block's body holds it (a SeqStmt's element, else 0).
  std::unordered_map<const ir::BlockNode*, const ir::BlockNode*> parent;
  std::unordered_map<const ir::BlockNode*, size_t> top_index;
  bool block_in_init = false;  // some block lies in a block's init

 private:
  std::vector<const ir::ForNode*> stack_;
  std::vector<size_t> block_depth_;  // stack_.size() at each enclosing block
  std::vector<const ir::BlockNode*> blocks_;  // the enclosing blocks
  std::vector<size_t> top_index_;             // per enclosing block, the statement visited
  int init_depth_ = 0;
};



// The number of nodes of an expression.
class ExprSize : public ir::ExprVisitor {
 public:
  size_t nodes = 0;
  void visit_(const ir::IntImmNode*) override { ++nodes; }
  void visit_(const ir::FloatImmNode*) override { ++nodes; }
  void visit_(const ir::VarNode*) override { ++nodes; }
};

bool has_default(const SlotSchema& s) { return s.default_kind != DefaultKind::kRequired; }

Arg uniform_probs(size_t n) {
  Arg::List list;
  for (size_t i = 0; i < n; ++i) list.push_back(Arg(1.0 / static_cast<double>(n)));
  return Arg(std::move(list));
}

size_t list_size(const Arg& a) {
  const auto* list = a.as<Arg::List>();
  return list ? list->size() : 0;
}

// The default of slot `index` given the values before it.
Arg default_of(const KindSchema& kind, size_t index, const std::vector<Arg>& values) {
  const SlotSchema& s = kind.slots[index];
  switch (s.default_kind) {
    case DefaultKind::kValue: return s.default_value;
    case DefaultKind::kEmpty: return Arg(Arg::List{});
    case DefaultKind::kUniformProbs: return uniform_probs(index > 0 ? list_size(values[index - 1]) : 0);
    case DefaultKind::kRequired: break;
  }
  DRAGON_UNREACHABLE("slot {} of {} has no default", s.name, kind.mnemonic);
}

// A line that stops after `values` is canonical when the last slot written (empty rests
// write nothing) does not equal its default: the encoder omits trailing defaults.
bool canonical_stop(const KindSchema& kind, const std::vector<Arg>& values) {
  for (size_t s = values.size(); s < kind.slots.size(); ++s) {
    if (!has_default(kind.slots[s])) return false;
  }
  size_t j = values.size();
  while (j > 0 && kind.slots[j - 1].shape == SlotShape::kRest && list_size(values[j - 1]) == 0) --j;
  if (j == 0) return true;
  const SlotSchema& last = kind.slots[j - 1];
  return !has_default(last) || !(values[j - 1] == default_of(kind, j - 1, values));
}

// A copy of `pos` with room for one more value and element and `extra_text` more bytes
// of text: advance and the search extend a position by that much at most, and a plain
// copy (capacity equal to size) would reallocate each of them again.
Position copy_for_extension(const Position& pos, size_t extra_text) {
  Position p;
  p.kind = pos.kind;
  p.slot = pos.slot;
  // An empty vector stays unallocated: its first push allocates once either way.
  if (!pos.values.empty()) {
    p.values.reserve(pos.values.size() + 1);
    p.values.assign(pos.values.begin(), pos.values.end());
  }
  if (!pos.elems.empty()) {
    p.elems.reserve(pos.elems.size() + 1);
    p.elems.assign(pos.elems.begin(), pos.elems.end());
  }
  p.list_open = pos.list_open;
  p.decision = pos.decision;
  p.decision_values = pos.decision_values;
  p.text.reserve(pos.text.size() + extra_text);
  p.text = pos.text;
  return p;
}

std::string rv_word(RVType type, size_t index) {
  std::string word(1, schedule::rv_prefix(type));
  word += std::to_string(index);
  return word;
}

}  // namespace

LineOracle::LineOracle(std::shared_ptr<const ReplayState> state, OracleCounters* counters, WitnessMemo* witnesses,
                       BlockizeMemo* blockize_memo)
    : state_(std::move(state)), counters_(counters), witnesses_(witnesses), blockize_memo_(blockize_memo) {
  BlockNames visitor;
  visitor.visit(state_->sch.func()->body);
  block_names_ = std::move(visitor.names);
  loops_above_ = std::move(visitor.loops_above);
  loops_in_scope_ = std::move(visitor.loops_in_scope);
  top_level_blocks_ = std::move(visitor.top_level);
  realize_of_ = std::move(visitor.realize_of);
  non_leaf_blocks_ = std::move(visitor.non_leaf);
  parent_block_ = std::move(visitor.parent);
  top_index_ = std::move(visitor.top_index);
  block_in_init_ = visitor.block_in_init;
  std::unordered_set<std::string_view> distinct(block_names_.begin(), block_names_.end());
  unique_block_names_ = distinct.size() == block_names_.size();
  has_location_marks_ = std::find(state_->loop_is_location.begin(), state_->loop_is_location.end(), true) !=
                        state_->loop_is_location.end();
}

const ir::BlockNode* LineOracle::block_at(int64_t id) const {
  // find first: emplace would allocate a node on every lookup.
  auto it = resolved_.find(id * 2 + 1);
  if (it == resolved_.end()) {
    it = resolved_.emplace(id * 2 + 1, nullptr).first;
    try {
      it->second = state_->sch.get(schedule::BlockRV{id});
    } catch (const std::exception&) {
    }
  }
  if (it->second == nullptr) throw std::out_of_range("block variable does not resolve");
  return static_cast<const ir::BlockNode*>(it->second);
}

const ir::ForNode* LineOracle::loop_at(int64_t id) const {
  // find first: emplace would allocate a node on every lookup.
  auto it = resolved_.find(id * 2);
  if (it == resolved_.end()) {
    it = resolved_.emplace(id * 2, nullptr).first;
    try {
      it->second = state_->sch.get(schedule::LoopRV{id});
    } catch (const std::exception&) {
    }
  }
  if (it->second == nullptr) throw std::out_of_range("loop variable does not resolve");
  return static_cast<const ir::ForNode*>(it->second);
}

bool LineOracle::loop_above_block(const Arg& block, const Arg& loop) const {
  const auto* block_rv = block.as<RandomVar>();
  const auto* loop_rv = loop.as<RandomVar>();
  if (block_rv == nullptr || loop_rv == nullptr || block_rv->type != RVType::kBlock || loop_rv->type != RVType::kLoop)
    return false;
  try {
    auto it = loops_above_.find(block_at(block_rv->id));
    if (it == loops_above_.end()) return false;
    const ir::ForNode* node = loop_at(loop_rv->id);
    return std::find(it->second.begin(), it->second.end(), node) != it->second.end();
  } catch (const std::exception&) {
    return false;  // unresolvable: the trial decides
  }
}

// ---- Reading words ------------------------------------------------------------------

namespace {

std::optional<Arg> read_rv(const ReplayState& st, std::string_view word, bool block, bool loop, bool expr) {
  auto rv = parse_rv_name(word);
  if (!rv) return std::nullopt;
  auto [type, index] = *rv;
  if ((type == RVType::kBlock && !block) || (type == RVType::kLoop && !loop) || (type == RVType::kExpr && !expr))
    return std::nullopt;
  const auto& vars = st.vars[static_cast<size_t>(type)];
  if (index < 0 || static_cast<size_t>(index) >= vars.size()) return std::nullopt;
  return Arg(vars[index]);
}

std::optional<Arg> read_value(const ReplayState& st, const SlotSchema& slot, std::string_view word) {
  using T = ValueType;
  switch (slot.type) {
    case T::kBlock: return read_rv(st, word, true, false, false);
    case T::kLoop: return read_rv(st, word, false, true, false);
    case T::kExpr: return read_rv(st, word, false, false, true);
    case T::kBlockOrLoop: return read_rv(st, word, true, true, false);
    case T::kInt:
    case T::kCount: {
      auto v = parse_canonical_int(word);
      if (!v || (slot.type == T::kCount && *v < 0)) return std::nullopt;
      return Arg(*v);
    }
    case T::kFloat: {
      if (auto i = parse_canonical_int(word)) return Arg(*i);
      if (auto d = parse_canonical_float(word)) return Arg(*d);
      return std::nullopt;
    }
    case T::kBool:
      if (word == "true") return Arg(true);
      if (word == "false") return Arg(false);
      return std::nullopt;
    case T::kString:
    case T::kEnum: {
      auto s = parse_string_word(word, slot.names, slot.type == T::kEnum);
      if (!s) return std::nullopt;
      return Arg(std::move(*s));
    }
    case T::kSplitFactor:
      if (word == "None") return Arg(schedule::None{});
      if (auto i = parse_canonical_int(word)) return Arg(*i);
      return read_rv(st, word, false, false, true);
    case T::kAnnValue:
      if (word == "true") return Arg(true);
      if (word == "false") return Arg(false);
      if (auto i = parse_canonical_int(word)) return Arg(*i);
      if (auto d = parse_canonical_float(word)) return Arg(*d);
      if (auto rv = read_rv(st, word, false, false, true)) return rv;
      if (auto s = parse_string_word(word, {}, false)) return Arg(std::move(*s));
      return std::nullopt;
    case T::kOptionalNumber:
      if (word == "None") return Arg(schedule::None{});
      if (auto i = parse_canonical_int(word)) return Arg(*i);
      if (auto d = parse_canonical_float(word)) return Arg(*d);
      return std::nullopt;
  }
  return std::nullopt;
}

// Closes the rest slot in progress, if any.
void finish_rest(const KindSchema& kind, Position& p) {
  if (p.slot < kind.slots.size() && kind.slots[p.slot].shape == SlotShape::kRest) {
    p.values.push_back(Arg(std::move(p.elems)));
    p.elems.clear();
    ++p.slot;
  }
}

}  // namespace

std::optional<Position> LineOracle::advance(const Position& pos, std::string_view word) const {
  Position p = copy_for_extension(pos, word.size() + 1);
  if (p.text.empty()) {
    p.text = std::string(word);
  } else if (word == "]" || p.text.back() == '[') {
    p.text += word;
  } else {
    p.text += ' ';
    p.text += word;
  }
  if (p.kind == nullptr) {
    p.kind = find_mnemonic(word);
    if (p.kind == nullptr) return std::nullopt;
    return p;
  }
  const KindSchema& kind = *p.kind;
  if (p.decision) {
    auto v = parse_canonical_int(word);
    if (!v) return std::nullopt;
    p.decision_values.push_back(*v);
    return p;
  }
  if (p.list_open) {
    if (word == "]") {
      p.values.push_back(Arg(std::move(p.elems)));
      p.elems.clear();
      p.list_open = false;
      ++p.slot;
      return p;
    }
    auto v = read_value(*state_, kind.slots[p.slot], word);
    if (!v) return std::nullopt;
    p.elems.push_back(std::move(*v));
    return p;
  }
  if (word == "=") {
    if (kind.decision == DecisionShape::kNone) return std::nullopt;
    if (p.slot < kind.slots.size() && kind.slots[p.slot].shape == SlotShape::kRest && !p.elems.empty())
      finish_rest(kind, p);
    // The decision follows the written slots; the omitted ones must be trailing defaults.
    if (!canonical_stop(kind, p.values)) return std::nullopt;
    p.decision = true;
    return p;
  }
  while (p.slot < kind.slots.size()) {
    const SlotSchema& slot = kind.slots[p.slot];
    if (slot.shape == SlotShape::kRest) {
      if (word != "[") {
        if (auto v = read_value(*state_, slot, word)) {
          p.elems.push_back(std::move(*v));
          return p;
        }
      }
      finish_rest(kind, p);  // the word belongs to a later slot
      continue;
    }
    if (slot.shape == SlotShape::kList) {
      if (word != "[") return std::nullopt;
      p.list_open = true;
      return p;
    }
    auto v = read_value(*state_, slot, word);
    if (!v) return std::nullopt;
    p.values.push_back(std::move(*v));
    ++p.slot;
    return p;
  }
  return std::nullopt;
}

// ---- Trying a line --------------------------------------------------------------------

bool LineOracle::try_line(const Position& pos, const std::optional<std::vector<int64_t>>& decision,
                          std::shared_ptr<ReplayState>* next) {
  const KindSchema& kind = *pos.kind;
  // Every slot's value, omitted ones at their defaults.
  std::vector<Arg> values;
  values.reserve(kind.slots.size());  // one allocation for the written values and the defaults
  values.assign(pos.values.begin(), pos.values.end());
  while (values.size() < kind.slots.size()) values.push_back(default_of(kind, values.size(), values));
  std::vector<Arg> inputs, attrs;
  inputs.reserve(kind.slots.size());
  attrs.reserve(kind.slots.size());
  auto put = [](std::vector<Arg>& into, size_t index, Arg value) {
    if (into.size() <= index) into.resize(index + 1);
    into[index] = std::move(value);
  };
  std::optional<int64_t> count;
  for (size_t s = 0; s < kind.slots.size(); ++s) {
    const SlotSchema& slot = kind.slots[s];
    switch (slot.source) {
      case SlotSource::kInput: put(inputs, slot.index, values[s]); break;
      case SlotSource::kAttr: put(attrs, slot.index, values[s]); break;
      case SlotSource::kInputsFrom:
        if (inputs.size() < static_cast<size_t>(slot.index)) inputs.resize(slot.index);
        for (const Arg& a : *values[s].as<Arg::List>()) inputs.push_back(a);
        break;
      case SlotSource::kOutputCount: count = *values[s].as<int64_t>(); break;
    }
  }
  std::optional<Arg> decision_arg;
  if (decision) {
    decision_arg = kind.decision == DecisionShape::kIntList ? Arg::int_list(*decision) : Arg((*decision).at(0));
  }
  if (kind.kind == InstructionKind::Fuse && !fuse_chain_possible(inputs)) {
    last_error_name_.clear();  // not a failure of ComputeAt's operands
    return false;
  }
  if (shortcuts_ && next == nullptr) {
    if (std::optional<bool> ok = outcome_by_rule(kind.kind, inputs, attrs, decision_arg, count)) {
      last_error_name_.clear();  // not a failure of ComputeAt's operands
      last_error_reason_.clear();
      if (*ok) last_success_ = Witness{std::move(values), decision};
      return *ok;
    }
  }
  // The same trial on the same state has the same outcome: searches of nested positions
  // and of a position's next words meet the same completions.
  std::string trial_key = schedule::to_string(schedule::Instruction{kind.kind, inputs, attrs, {}});
  if (decision_arg) trial_key += " = " + schedule::to_string(*decision_arg);
  if (count) trial_key += " #" + std::to_string(*count);
  // The exact instruction (the memo key below merges Annotate's literals).
  const std::string applied_key = trial_key;
  if (next == nullptr) {
    const Arg* value = inputs.size() == 2 ? &inputs[1] : nullptr;
    if (kind.kind == InstructionKind::Annotate && value && attrs.size() == 1 && attrs[0].as<std::string>() &&
        (value->as<int64_t>() || value->as<double>() || value->as<std::string>() || value->as<bool>())) {
      // annotate.cc resolves the target (and a variable value); a literal value and the
      // key only shape the annotation stored, so they do not change the outcome.
      trial_key = "Annotate " + schedule::to_string(inputs[0]) + " <literal>";
    }
    auto known = trial_memo_.find(trial_key);
    if (known != trial_memo_.end()) {
      last_error_name_ = known->second.error_name;
      last_error_reason_ = known->second.error_reason;
      if (known->second.ok) last_success_ = Witness{std::move(values), decision};
      return known->second.ok;
    }
  }
  std::vector<RandomVar> outputs;
  bool ok = true;
  if (next != nullptr && last_applied_ && last_applied_->key == applied_key) {
    // The line was the last trial that applied (its final check): its schedule is the
    // state after the line.
    scratch_.emplace(std::move(last_applied_->sch));
    outputs = std::move(last_applied_->outputs);
    last_applied_.reset();
    return commit_line(pos, kind, std::move(outputs), next);
  }
  ++counters_->trials;
  if (shortcuts_ && next == nullptr && !count && !decision_arg &&
      (kind.kind == InstructionKind::ComputeAt || kind.kind == InstructionKind::ReverseComputeAt)) {
    // Only the outcome is wanted: the primitive's preconditions without building the new
    // IR (the line's commit, if any, applies it for real). A shortcut: with shortcuts off
    // the trial runs, so the shortcut tests compare the two at every position.
    if (std::optional<bool> ok = check_compute_at(kind.kind, inputs, attrs)) {
      if (*ok) last_success_ = Witness{std::move(values), decision};
      trial_memo_.emplace(std::move(trial_key), TrialOutcome{*ok, last_error_name_, last_error_reason_});
      return *ok;
    }
  }
  if (!scratch_) scratch_.emplace(state_->sch.copy());
  const size_t before = scratch_->trace().size();
  last_error_name_.clear();
  last_error_reason_.clear();
  try {
    outputs = schedule::apply_instruction(*scratch_, schedule::Instruction{kind.kind, std::move(inputs), std::move(attrs), {}},
                                          decision_arg);
  } catch (const schedule::ScheduleError& e) {
    ok = false;
    if (e.kind() == kind.kind) {
      last_error_name_ = e.error_name();
      last_error_reason_ = e.reason();
    }
  } catch (const std::exception&) {
    ok = false;
  }
  if (ok && count && *count != kAnyCount && static_cast<size_t>(*count) != outputs.size()) ok = false;
  // A decision replay would change is not the script's: the script must say what runs.
  if (ok && decision_arg && scratch_->trace().decision(scratch_->trace().size() - 1) != decision_arg) ok = false;
  if (ok && next != nullptr) return commit_line(pos, kind, std::move(outputs), next);
  if (ok) last_success_ = Witness{std::move(values), decision};
  trial_memo_.emplace(std::move(trial_key), TrialOutcome{ok, last_error_name_, last_error_reason_});
  if (ok) {
    // Kept: the line that ends with this instruction is committed from it.
    last_applied_ = AppliedTrial{applied_key, std::move(*scratch_), std::move(outputs)};
    scratch_.reset();
  } else if (scratch_->trace().size() != before) {
    scratch_.reset();
  }
  return ok;
}

std::optional<bool> LineOracle::check_compute_at(InstructionKind kind, const std::vector<Arg>& inputs,
                                                 const std::vector<Arg>& attrs) {
  // Operands of the shapes apply_compute_at and apply_reverse_compute_at accept; anything
  // else is left to the trial, which reports the malformed operand as the primitive does.
  auto rv_of = [](const Arg& a, RVType type) -> std::optional<int64_t> {
    const auto* rv = a.as<RandomVar>();
    if (rv == nullptr || rv->type != type) return std::nullopt;
    return rv->id;
  };
  if (inputs.size() != 2 || attrs.size() != 2 || !attrs[1].as<int64_t>()) return std::nullopt;
  const auto* unit = attrs[0].as<int64_t>();
  if (!attrs[0].as<bool>() && !(unit && (*unit == 0 || *unit == 1))) return std::nullopt;
  auto block = rv_of(inputs[0], RVType::kBlock);
  auto loop = rv_of(inputs[1], RVType::kLoop);
  if (!block || !loop) return std::nullopt;
  last_error_name_.clear();
  last_error_reason_.clear();
  try {
    const schedule::BlockRV block_rv{*block};
    const schedule::LoopRV loop_rv{*loop};
    const int64_t index = *attrs[1].as<int64_t>();
    if (kind == InstructionKind::ComputeAt) state_->sch.check_compute_at(block_rv, loop_rv, index);
    else state_->sch.check_reverse_compute_at(block_rv, loop_rv, index);
  } catch (const schedule::ScheduleError& e) {
    if (e.kind() == kind) {
      last_error_name_ = e.error_name();
      last_error_reason_ = e.reason();
    }
    return false;
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

bool LineOracle::commit_line(const Position& pos, const KindSchema& kind, std::vector<RandomVar> outputs,
                             std::shared_ptr<ReplayState>* next) {
  auto st = std::make_shared<ReplayState>(std::move(*scratch_));
  scratch_.reset();
  for (size_t t = 0; t < 3; ++t) st->vars[t] = state_->vars[t];
  st->loop_is_location = state_->loop_is_location;
  for (const RandomVar& rv : outputs) {
    st->vars[static_cast<size_t>(rv.type)].push_back(rv);
    if (rv.type == RVType::kLoop) st->loop_is_location.push_back(kind.kind == InstructionKind::SampleComputeLocation);
  }
  st->decoder = state_->decoder;
  try {
    st->decoder.feed(pos.text);
  } catch (const std::exception&) {
    return false;
  }
  *next = std::move(st);
  return true;
}

namespace {

// The decision a completion writes after `prefix`, if one can still be valid; for
// SampleComputeLocation the root (-1), always a legal location.
std::optional<std::vector<int64_t>> complete_decision(const ReplayState& st, const KindSchema& kind,
                                                      const std::vector<Arg>& values,
                                                      const std::vector<int64_t>& prefix) {
  switch (kind.kind) {
    case InstructionKind::SamplePerfectTile: {
      const int64_t n = *values.at(1).as<int64_t>();
      if (n < 1 || n > kMaxTiles || static_cast<int64_t>(prefix.size()) > n) return std::nullopt;
      int64_t extent = 0;
      try {
        auto e = ir::as_const_int(st.sch.get(schedule::LoopRV{values.at(0).as<RandomVar>()->id})->extent);
        if (!e) return std::nullopt;
        extent = *e;
      } catch (const std::exception&) {
        return std::nullopt;
      }
      int64_t rest = extent;
      for (int64_t f : prefix) {
        if (f < 1 || rest % f != 0) return std::nullopt;
        rest /= f;
      }
      std::vector<int64_t> out = prefix;
      if (static_cast<int64_t>(out.size()) == n) {
        if (rest != 1) return std::nullopt;
        return out;
      }
      while (static_cast<int64_t>(out.size()) < n - 1) out.push_back(1);
      out.push_back(rest);
      return out;
    }
    case InstructionKind::SampleCategorical:
      if (prefix.size() > 1) return std::nullopt;
      return prefix.empty() ? std::vector<int64_t>{0} : prefix;
    default:
      if (prefix.size() > 1) return std::nullopt;
      return prefix.empty() ? std::vector<int64_t>{-1} : prefix;
  }
}

}  // namespace

// ---- Pools of values ------------------------------------------------------------------

const LineOracle::TypedPool& LineOracle::typing_pool(const Position& pos, const SlotSchema& slot, TypedPool& built) const {
  // Slots of random variables only: their pool depends on the state alone (and, for a
  // loop, on whether location marks are admitted), so it is built once per oracle and
  // lent, not copied (searches ask for it at every level). rv_pools_ only grows, and an
  // unordered_map keeps its elements in place, so the reference stays valid.
  const bool location_kind =
      pos.kind->kind == InstructionKind::ComputeAt || pos.kind->kind == InstructionKind::ReverseComputeAt;
  const bool rv_slot = slot.type == ValueType::kBlock || slot.type == ValueType::kLoop ||
                       slot.type == ValueType::kExpr || slot.type == ValueType::kBlockOrLoop;
  if (rv_slot) {
    const size_t key = static_cast<size_t>(slot.type) * 2 + (slot.type == ValueType::kLoop && location_kind ? 1 : 0);
    auto it = rv_pools_.find(key);
    if (it == rv_pools_.end()) it = rv_pools_.emplace(key, build_typing_pool(pos, slot)).first;
    return it->second;
  }
  built = build_typing_pool(pos, slot);
  return built;
}

LineOracle::TypedPool LineOracle::build_typing_pool(const Position& pos, const SlotSchema& slot) const {
  std::vector<std::pair<Arg, std::string>> out;
  const ReplayState& st = *state_;
  // Invalidated variables fail every primitive (precondition 0), except location marks
  // in compute_at's loop slot.
  auto add_rvs = [&](RVType type, bool marks_too) {
    const auto& vars = st.vars[static_cast<size_t>(type)];
    for (size_t i = 0; i < vars.size(); ++i) {
      const bool mark = marks_too && type == RVType::kLoop && st.loop_is_location[i];
      if (type == RVType::kExpr || mark || is_valid(type, i)) {
        std::pair<Arg, std::string>& added = out.emplace_back();
        added.first = Arg(vars[i]);
        added.second = rv_word(type, i);
      }
    }
  };
  // A buffer index past the block's reads or writes fails (IndexOutOfRange).
  auto buffer_count = [&](bool reads) -> int64_t {
    try {
      const auto* block = block_at(pos.values.at(0).as<RandomVar>()->id);
      return static_cast<int64_t>(reads ? block->reads.size() : block->writes.size());
    } catch (const std::exception&) {
      return 0;
    }
  };
  auto add_ints = [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v <= hi; ++v) {
      std::pair<Arg, std::string>& added = out.emplace_back();
      added.first = Arg(v);
      added.second = std::to_string(v);
    }
  };
  const InstructionKind kind = pos.kind->kind;
  const bool location = kind == InstructionKind::ComputeAt || kind == InstructionKind::ReverseComputeAt;
  switch (slot.type) {
    case ValueType::kBlock: add_rvs(RVType::kBlock, false); break;
    case ValueType::kLoop: add_rvs(RVType::kLoop, location); break;
    case ValueType::kExpr: add_rvs(RVType::kExpr, false); break;
    case ValueType::kBlockOrLoop:
      add_rvs(RVType::kBlock, false);
      add_rvs(RVType::kLoop, false);
      break;
    case ValueType::kBool:
      out.emplace_back(Arg(true), "true");
      out.emplace_back(Arg(false), "false");
      break;
    case ValueType::kEnum:
      for (const ShortName& n : slot.names) out.emplace_back(Arg(std::string(n.full)), std::string(n.code));
      break;
    case ValueType::kString:
      if (slot.name == "name") {
        for (const std::string& name : block_names_) out.emplace_back(Arg(name), spell_string(name, {}));
      } else if (slot.name == "ann_key" && kind == InstructionKind::Unannotate) {
        // The keys the target has now.
        const RandomVar target = *pos.values.at(0).as<RandomVar>();
        const ir::Annotations* annotations = nullptr;
        try {
          if (target.type == RVType::kBlock) annotations = &block_at(target.id)->annotations;
          else annotations = &loop_at(target.id)->annotations;
        } catch (const std::exception&) {
        }
        if (annotations) {
          for (const auto& [key, value] : *annotations) out.emplace_back(Arg(key), spell_string(key, slot.names));
        }
      }
      break;
    case ValueType::kInt:
      if (slot.name == "index") add_ints(-2, 32);
      else if (slot.name == "factor_axis") add_ints(-9, 8);
      else if (slot.name == "max_innermost_factor") out.emplace_back(Arg(int64_t{-1}), "-1");
      else if (slot.name == "n") add_ints(1, kMaxTiles);
      else if (pos.kind->kind == InstructionKind::SampleCategorical) {
      }  // candidates: unbounded
      else if (slot.name == "read_buffer_index") add_ints(0, buffer_count(true) - 1);
      else if (slot.name == "write_buffer_index" || slot.name == "buffer_index") add_ints(0, buffer_count(false) - 1);
      else add_ints(0, 16);
      break;
    case ValueType::kCount: break;  // the lookup's own count: see options()
    case ValueType::kSplitFactor:
      out.emplace_back(Arg(schedule::None{}), "None");
      add_rvs(RVType::kExpr, false);
      break;
    case ValueType::kAnnValue:
      out.emplace_back(Arg(true), "true");
      out.emplace_back(Arg(false), "false");
      add_rvs(RVType::kExpr, false);
      break;
    case ValueType::kFloat: break;
    case ValueType::kOptionalNumber: out.emplace_back(Arg(schedule::None{}), "None"); break;
  }
  return out;
}

std::vector<Arg> LineOracle::completion_pool(const Position& pos, const SlotSchema& slot) const {
  const InstructionKind kind = pos.kind->kind;
  std::vector<Arg> out;
  switch (slot.type) {
    case ValueType::kInt:
      // Each of these slots has one value that is valid whenever any is (README.md).
      if (slot.name == "n") return {Arg(int64_t{1})};
      if (slot.name == "max_innermost_factor") return {Arg(int64_t{-1})};
      if (slot.name == "index") return {Arg(int64_t{-1})};
      if (slot.name == "factor_axis") return {Arg(int64_t{0})};
      if (slot.name.find("index") != std::string_view::npos) break;  // buffer indices: each
      if (kind == InstructionKind::StorageAlign) {
        // storage_align.cc: axis 0 is in range whenever any axis is, factors below 1 and
        // offsets outside [0, factor) always fail, and no other check reads them; so
        // of the two values below, these are the ones that can apply.
        if (slot.name == "axis" || slot.name == "offset") return {Arg(int64_t{0})};
        if (slot.name == "factor") return {Arg(int64_t{1})};
      }
      // Other integer operands (StorageAlign's axis, factor, offset): 0 and 1 only, an
      // approximation (README.md) that keeps the search from multiplying pools.
      return {Arg(int64_t{0}), Arg(int64_t{1})};
    case ValueType::kCount: return {Arg(kAnyCount)};
    case ValueType::kEnum:
      // Bind: threadIdx.x admits the most loops (cross-thread reductions); scopes: any
      // storage scope passes the same checks.
      if (kind == InstructionKind::Bind) return {Arg(std::string("threadIdx.x"))};
      return {Arg(std::string("shared"))};
    case ValueType::kString:
      if (slot.name == "ann_key" && kind == InstructionKind::Annotate) return {Arg(std::string("x"))};
      if (slot.name == "tensor_intrin") return {Arg(std::string("x"))};
      break;
    case ValueType::kAnnValue: return {Arg(int64_t{0})};
    case ValueType::kBool: return {slot.default_kind == DefaultKind::kValue ? slot.default_value : Arg(true)};
    case ValueType::kFloat: return {Arg(1.0)};
    default: break;
  }
  TypedPool built;
  const TypedPool& typed = typing_pool(pos, slot, built);
  out.reserve(typed.size());
  for (const auto& [value, word] : typed) out.push_back(value);
  return out;
}

std::vector<std::vector<Arg>> LineOracle::rest_extensions(const Position& pos, const SlotSchema& slot) const {
  const InstructionKind kind = pos.kind->kind;
  std::vector<std::vector<Arg>> out = {{}};
  if (kind == InstructionKind::Split) {
    // One inferred factor completes any prefix of positive factors.
    bool has_none = std::any_of(pos.elems.begin(), pos.elems.end(), [](const Arg& a) { return a.is_none(); });
    if (!has_none) out.insert(out.begin(), std::vector<Arg>{Arg(schedule::None{})});
    return out;
  }
  if (kind == InstructionKind::CacheWrite) return out;  // replay takes no consumer list
  // Fuse, Reorder, CacheRead: the preconditions hold for a list when they hold for each
  // prefix, so from a non-empty prefix stopping is the completion to try.
  if (pos.elems.empty()) {
    for (Arg& a : completion_pool(pos, slot)) out.push_back({std::move(a)});
  }
  return out;
}

// ---- Feasibility ------------------------------------------------------------------------

bool LineOracle::feasible(const Position& pos) {
  if (pos.kind == nullptr) return true;
  std::string key = memo_key(pos);  // moved into the memo when done
  auto it = feasible_memo_.find(key);
  if (it != feasible_memo_.end()) return it->second;
  // A mnemonic alone: first the completion that applied for this kind before (a trial
  // that applies proves the line completes; one that fails proves nothing, so the search
  // follows).
  const bool mnemonic_only = pos.slot == 0 && pos.values.empty() && pos.elems.empty() && !pos.list_open && !pos.decision;
  const int kind_key = static_cast<int>(pos.kind->kind);
  bool result = false;
  if (shortcuts_ && mnemonic_only && schedule::can_apply_instruction(pos.kind->kind) &&
      mnemonic_applies_by_rule(pos.kind->kind)) {
    feasible_memo_.emplace(std::move(key), true);
    return true;
  }
  if (mnemonic_only && witnesses_ != nullptr && schedule::can_apply_instruction(pos.kind->kind)) {
    auto w = witnesses_->find(kind_key);
    // Blockize's search tries the cheapest loops first, usually cheaper than the witness.
    const bool search_cheaper = shortcuts_ && pos.kind->kind == InstructionKind::Blockize;
    if (w != witnesses_->end() && !search_cheaper && !(shortcuts_ && witness_ruled_out(pos.kind->kind, w->second.values))) {
      Position q = pos;
      q.values = w->second.values;
      q.slot = q.values.size();
      result = try_line(q, w->second.decision, nullptr);
    }
  }
  // Typed operands meet the checks the search makes on the completions it picks (each a
  // precondition the primitive checks on that operand alone, so the trial would fail).
  if (shortcuts_ && !mnemonic_only && typed_operand_fails(pos)) {
    feasible_memo_.emplace(std::move(key), false);
    return false;
  }
  if (!result) {
    last_success_.reset();
    result = search(pos);
    if (result && mnemonic_only && witnesses_ != nullptr && last_success_) (*witnesses_)[kind_key] = *last_success_;
  }
  feasible_memo_.emplace(std::move(key), result);
  return result;
}

bool LineOracle::typed_operand_fails(const Position& pos) const {
  const InstructionKind kind = pos.kind->kind;
  const bool location = kind == InstructionKind::ComputeAt || kind == InstructionKind::ReverseComputeAt;
  std::vector<Arg> before;
  for (size_t s = 0; s < pos.values.size(); ++s) {
    const Arg& value = pos.values[s];
    if (location && s == 1 && !is_location_mark(value)) {
      if (loop_above_block(pos.values[0], value)) return true;
      if (kind == InstructionKind::ReverseComputeAt && !loop_holds_producer(pos.values[0], value)) return true;
    }
    if (operand_rules_out(kind, s, value, before)) return true;
    before.push_back(value);
  }
  return false;
}

bool LineOracle::loop_holds_producer(const Arg& block, const Arg& loop) const {
  const auto* block_rv = block.as<RandomVar>();
  const auto* loop_rv = loop.as<RandomVar>();
  if (block_rv == nullptr || loop_rv == nullptr || block_rv->type != RVType::kBlock || loop_rv->type != RVType::kLoop)
    return true;
  try {
    const ir::BlockNode* consumer = block_at(block_rv->id);
    const ir::ForNode* node = loop_at(loop_rv->id);
    for (const auto& [other, loops] : loops_above_) {
      if (other == consumer || std::find(loops.begin(), loops.end(), node) == loops.end()) continue;
      for (const ir::BufferRegion& write : other->writes) {
        for (const ir::BufferRegion& read : consumer->reads) {
          if (write.buffer.get() == read.buffer.get()) return true;
        }
      }
    }
    return false;
  } catch (const std::exception&) {
    return true;  // unresolvable: the trial decides
  }
}

bool LineOracle::fuse_chain_possible(const std::vector<Arg>& loops) const {
  // fuse.cc checks these first, on the loops alone: at least one, each resolves, none
  // twice, each the only child (the body) of the one before.
  if (loops.empty()) return false;
  std::vector<const ir::ForNode*> nodes;
  for (const Arg& a : loops) {
    const auto* rv = a.as<RandomVar>();
    if (rv == nullptr || rv->type != RVType::kLoop) return true;  // malformed: the trial decides
    try {
      nodes.push_back(loop_at(rv->id));
    } catch (const std::exception&) {
      return false;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (std::find(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(i), nodes[i]) != nodes.begin() + static_cast<std::ptrdiff_t>(i))
      return false;
    if (i > 0 && nodes[i - 1]->body.get() != nodes[i]) return false;
  }
  return true;
}

bool LineOracle::is_valid(RVType type, size_t index) const {
  std::vector<int8_t>& known = valid_cache_[static_cast<size_t>(type)];
  const auto& vars = state_->vars[static_cast<size_t>(type)];
  if (known.size() < vars.size()) known.resize(vars.size(), -1);
  if (known[index] < 0) known[index] = state_->sch.is_valid(vars[index]) ? 1 : 0;
  return known[index] == 1;
}

std::optional<size_t> LineOracle::script_index(const RandomVar& rv) const {
  if (!index_built_) {
    // Variable ids are the schedule's symbol indices (small, dense): a table, not a map.
    // The first variable of an id keeps it, as a map's emplace would.
    for (size_t t = 0; t < 3; ++t) {
      for (size_t i = 0; i < state_->vars[t].size(); ++i) {
        const int64_t id = state_->vars[t][i].id;
        if (id < 0) continue;
        if (static_cast<size_t>(id) >= index_of_.size()) index_of_.resize(static_cast<size_t>(id) + 1, -1);
        if (index_of_[static_cast<size_t>(id)] < 0) index_of_[static_cast<size_t>(id)] = static_cast<int64_t>(i);
      }
    }
    index_built_ = true;
  }
  if (rv.id < 0 || static_cast<size_t>(rv.id) >= index_of_.size() || index_of_[static_cast<size_t>(rv.id)] < 0)
    return std::nullopt;
  const size_t index = static_cast<size_t>(index_of_[static_cast<size_t>(rv.id)]);
  const auto& vars = state_->vars[static_cast<size_t>(rv.type)];
  if (index >= vars.size() || vars[index].id != rv.id) return std::nullopt;  // another type
  return index;
}

bool LineOracle::is_location_mark(const Arg& loop) const {
  const auto* rv = loop.as<RandomVar>();
  if (rv == nullptr || rv->type != RVType::kLoop) return false;
  auto i = script_index(*rv);
  return i && state_->loop_is_location[*i];
}


bool LineOracle::trial_outcome(const schedule::Instruction& inst, const std::optional<Arg>& decision,
                               std::optional<int64_t> count) const {
  schedule::Schedule trial = state_->sch.copy();
  try {
    std::vector<RandomVar> outputs = schedule::apply_instruction(trial, inst, decision);
    if (count && *count != kAnyCount && static_cast<size_t>(*count) != outputs.size()) return false;
    return !decision || trial.trace().decision(trial.trace().size() - 1) == decision;
  } catch (const std::exception&) {
    return false;
  }
}

bool LineOracle::last_failure_block_only(InstructionKind kind) const {
  // compute_at.cc: after the location marks (which return early) and resolving both
  // operands, precondition 1 fails for the root block whatever the loop; ComputeAt's
  // preconditions 3 (NotCompleteOrReduction) and 4 (OutputBlock) and ReverseComputeAt's
  // 3 (NotCompleteBlock) read the block, its path and its realize only.
  if (last_error_name_ == "NotInSameScope") return last_error_reason_ == "the block is the root block";
  if (kind == InstructionKind::ComputeAt)
    return last_error_name_ == "NotCompleteOrReduction" || last_error_name_ == "OutputBlock";
  if (kind == InstructionKind::ReverseComputeAt) return last_error_name_ == "NotCompleteBlock";
  return false;
}

bool LineOracle::search(const Position& pos) {
  const KindSchema& kind = *pos.kind;
  // A kind this build cannot replay never applies.
  if (!schedule::can_apply_instruction(kind.kind)) return false;
  const size_t n = kind.slots.size();
  if (pos.decision) {
    auto d = complete_decision(*state_, kind, pos.values, pos.decision_values);
    return d && try_line(pos, d, nullptr);
  }
  if (pos.list_open) {
    const SlotSchema& slot = kind.slots[pos.slot];
    std::vector<std::vector<Arg>> extensions = {{}};
    if (slot.default_kind == DefaultKind::kUniformProbs) {
      // Probabilities: as many as candidates; 1.0 each for the missing ones.
      const size_t want = list_size(pos.values.at(pos.slot - 1));
      if (pos.elems.size() > want) return false;
      extensions = {std::vector<Arg>(want - pos.elems.size(), Arg(1.0))};
    } else if (pos.elems.empty()) {
      extensions.push_back({Arg(int64_t{0})});
    }
    for (auto& ext : extensions) {
      Position q = pos;
      for (Arg& a : ext) q.elems.push_back(a);
      q.values.push_back(Arg(std::move(q.elems)));
      q.elems.clear();
      q.list_open = false;
      ++q.slot;
      if (search(q)) return true;
    }
    return false;
  }
  if (pos.slot < n && kind.slots[pos.slot].shape == SlotShape::kRest) {
    for (auto& ext : rest_extensions(pos, kind.slots[pos.slot])) {
      Position q = pos;
      for (Arg& a : ext) q.elems.push_back(a);
      q.values.push_back(Arg(std::move(q.elems)));
      q.elems.clear();
      ++q.slot;
      if (search(q)) return true;
    }
    return false;
  }
  // At a slot boundary. Stopping here, when canonical, is the most permissive completion:
  // every defaulted slot's default admits whatever its other values admit.
  bool all_defaulted = true;
  for (size_t s = pos.slot; s < n; ++s) all_defaulted &= has_default(kind.slots[s]);
  if (all_defaulted && canonical_stop(kind, pos.values)) {
    if (kind.decision == DecisionShape::kNone) return try_line(pos, std::nullopt, nullptr);
    auto d = complete_decision(*state_, kind, pos.values, {});
    return d && try_line(pos, d, nullptr);
  }
  if (pos.slot >= n) return false;
  const SlotSchema& slot = kind.slots[pos.slot];
  if (shortcuts_ && required_slot_without_completion(pos)) return false;
  if (kind.kind == InstructionKind::Tensorize) {
    // Tensorize checks its intrinsic's name before anything else about the target; the
    // name a completion writes is "x" (completion_pool), and no target applies with an
    // unregistered name.
    for (size_t s = 0; s < n; ++s) {
      if (kind.slots[s].name != "tensor_intrin") continue;
      const std::string* written = s < pos.values.size() ? pos.values[s].as<std::string>() : nullptr;
      if (schedule::find_tensor_intrin(written ? *written : std::string("x")) == nullptr) return false;
    }
  }
  std::vector<Arg> pool;
  if (all_defaulted) {
    // Stopping is not canonical: the next slot must be written with another value.
    const Arg default_value = default_of(kind, pos.slot, pos.values);
    TypedPool built;
    for (const auto& [value, word] : typing_pool(pos, slot, built)) {
      if (!(value == default_value)) pool.push_back(value);
    }
  } else if (slot.shape == SlotShape::kList) {
    pool = {Arg(Arg::List{Arg(int64_t{0})})};  // SampleCategorical's candidates
  } else {
    pool = completion_pool(pos, slot);
  }
  if (kind.kind == InstructionKind::Blockize && pos.slot == 0 && shortcuts_) {
    // Any loop that applies will do; the cheapest trials come first (and the one that
    // applies becomes the next witness): short chains down to a block whose bindings
    // are small expressions (blockize analyses each binding).
    auto cost = [&](const Arg& a) {
      std::pair<size_t, size_t> c{0, 0};
      try {
        const auto* rv = a.as<RandomVar>();
        if (rv == nullptr || rv->type != RVType::kLoop) return c;
        const ir::StmtNode* node = loop_at(rv->id);
        for (; node->kind == ir::NodeKind::For; node = static_cast<const ir::ForNode*>(node)->body.get()) ++c.second;
        if (node->kind == ir::NodeKind::BlockRealize) {
          ExprSize size;
          for (const ir::Expr& e : static_cast<const ir::BlockRealizeNode*>(node)->iter_values) size.visit(e);
          c.first = size.nodes;
        }
      } catch (const std::exception&) {
      }
      return c;
    };
    std::vector<std::pair<std::pair<size_t, size_t>, size_t>> order;  // (cost, index), each cost computed once
    for (size_t i = 0; i < pool.size(); ++i) order.emplace_back(cost(pool[i]), i);
    std::sort(order.begin(), order.end());
    std::vector<Arg> sorted;
    for (const auto& [c, i] : order) sorted.push_back(std::move(pool[i]));
    pool = std::move(sorted);
  }
  // ComputeAt/ReverseComputeAt's loop slot: once a non-mark loop fails on the block
  // alone, every other non-mark loop fails too; marks take another path and are tried.
  const bool placement_slot = pos.slot == 1 && slot.type == ValueType::kLoop &&
                              (kind.kind == InstructionKind::ComputeAt || kind.kind == InstructionKind::ReverseComputeAt);
  bool block_fails = false;
  for (Arg& v : pool) {
    const bool mark = placement_slot && is_location_mark(v);
    if (block_fails && !mark) continue;
    // A loop above the block fails precondition 1 or 2 (compute_at.cc's place()); marks
    // return before it.
    if (placement_slot && !mark && loop_above_block(pos.values[0], v)) continue;
    // ReverseComputeAt's precondition 4 needs a block under the loop (at any depth is
    // looser than compute_at.cc's children of the loop) writing what the block reads.
    if (placement_slot && !mark && kind.kind == InstructionKind::ReverseComputeAt &&
        !loop_holds_producer(pos.values[0], v))
      continue;
    if (shortcuts_ && operand_rules_out(kind.kind, pos.slot, v, pos.values)) continue;
    Position q = copy_for_extension(pos, 2);
    q.values.push_back(v);
    ++q.slot;
    q.text += " ?";  // completions are never memoized under a real text
    last_error_name_.clear();
    if (search(q)) return true;
    if (placement_slot && !mark && last_failure_block_only(kind.kind)) block_fails = true;
  }
  return false;
}

bool LineOracle::required_slot_without_completion(const Position& pos) const {
  // Only string slots whose completion pool reads no earlier value qualify: every slot
  // name but "ann_key" (Unannotate offers the target's keys).
  const KindSchema& kind = *pos.kind;
  for (size_t s = pos.slot + 1; s < kind.slots.size(); ++s) {
    const SlotSchema& later = kind.slots[s];
    if (later.default_kind == DefaultKind::kRequired && later.shape == SlotShape::kSingle &&
        later.type == ValueType::kString && later.name != "ann_key" && completion_pool(pos, later).empty())
      return true;
  }
  return false;
}

bool LineOracle::line_valid(const Position& pos, std::shared_ptr<ReplayState>* next) {
  if (pos.kind == nullptr || pos.list_open) return false;
  const KindSchema& kind = *pos.kind;
  Position p = pos;
  if (!p.elems.empty()) finish_rest(kind, p);
  if (!canonical_stop(kind, p.values)) return false;
  std::optional<std::vector<int64_t>> decision;
  if (kind.decision != DecisionShape::kNone) {
    // The script must carry every decision (replay would otherwise sample afresh).
    if (!p.decision) return false;
    if (kind.decision == DecisionShape::kInt && p.decision_values.size() != 1) return false;
    decision = p.decision_values;
  }
  if (!try_line(p, decision, next)) return false;
  if (next == nullptr) {
    try {
      state_->decoder.check(pos.text);
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

// ---- Options ----------------------------------------------------------------------------

std::string LineOracle::memo_key(const Position& pos) const {
  // Annotate applies whatever its key (annotate.cc checks the target and the value
  // only), so after the key every key shares one analysis.
  if (pos.kind != nullptr && pos.kind->kind == InstructionKind::Annotate && pos.values.size() == 2 &&
      pos.elems.empty() && !pos.list_open && !pos.decision) {
    const size_t target_end = pos.text.find(' ', pos.text.find(' ') + 1);
    if (target_end != std::string::npos) return pos.text.substr(0, target_end) + " \x01key";
  }
  return pos.text;
}

const Options& LineOracle::options(const Position& pos) {
  std::string key = memo_key(pos);
  auto it = options_memo_.find(key);
  if (it != options_memo_.end()) return *it->second;
  return *options_memo_.emplace(std::move(key), compute_options(pos, false)).first->second;
}

const Options& LineOracle::seed_options(const Position& pos, Options options) {
  auto& slot = options_memo_[memo_key(pos)];
  slot = std::make_unique<Options>(std::move(options));
  return *slot;
}

bool LineOracle::has_continuation(const Position& pos) {
  std::string key = memo_key(pos);
  auto it = options_memo_.find(key);
  if (it != options_memo_.end()) return it->second->continuable();
  auto c = continuation_memo_.find(key);
  if (c != continuation_memo_.end()) return c->second;
  const bool result = compute_options(pos, true)->continuable();
  continuation_memo_.emplace(std::move(key), result);
  return result;
}

std::unique_ptr<Options> LineOracle::compute_options(const Position& pos, bool first_only) {
  ++counters_->positions;
  auto out = std::make_unique<Options>();
  // first_only: stop at the first next word (whether the line can go on at all).
  auto stop = [&] { return first_only && out->continuable(); };
  auto consider = [&](const std::string& word) {
    if (stop()) return;
    auto q = advance(pos, word);
    if (q && feasible(*q)) out->words.push_back(word);
  };
  // An unbounded class is admitted when its representative is.
  auto consider_class = [&](const std::string& representative) {
    if (stop()) return false;
    auto q = advance(pos, representative);
    return q && feasible(*q);
  };
  if (pos.kind == nullptr) {
    for (const KindSchema& k : all_kind_schemas()) {
      Position q;
      q.kind = &k;
      q.text = std::string(k.mnemonic);
      if (feasible(q)) out->words.push_back(q.text);
    }
  } else {
    const KindSchema& kind = *pos.kind;
    auto int_class = [&](int64_t lo, int64_t hi) {
      const int64_t rep = lo <= 1 && 1 <= hi ? 1 : lo;
      if (consider_class(std::to_string(rep))) {
        out->any_int = true;
        out->int_lo = lo;
        out->int_hi = hi;
      }
    };
    // The values a slot may take next (typed words and unbounded classes).
    auto slot_values = [&](const SlotSchema& slot) {
      TypedPool built;
      for (const auto& [value, word] : typing_pool(pos, slot, built)) consider(word);
      if (slot.type == ValueType::kCount) {
        // The count is what the lookup returns: try it once to learn it.
        for (int64_t c = 0; c <= 64 && !stop(); ++c) {
          auto q = advance(pos, std::to_string(c));
          if (q && feasible(*q)) {
            out->words.push_back(std::to_string(c));
            break;
          }
        }
      }
      if (slot.type == ValueType::kInt && slot.name == "max_innermost_factor") {
        int_class(1, kInt32Max);
      } else if (slot.type == ValueType::kInt && kind.kind == InstructionKind::SampleCategorical) {
        int_class(kInt64Min, kInt64Max);
      } else if (slot.type == ValueType::kSplitFactor) {
        // Positive integer factors whose product (with the ones written) fits i32.
        int64_t product = 1;
        for (const Arg& a : pos.elems) {
          if (const auto* i = a.as<int64_t>()) product = std::min<int64_t>(kInt32Max, product * std::max<int64_t>(1, *i));
        }
        int_class(1, kInt32Max / product);
      } else if (slot.type == ValueType::kAnnValue) {
        int_class(kInt64Min, kInt64Max);
        out->any_float = consider_class("0.5");
        if (consider_class("x")) {
          out->any_string = true;
          out->string_names = {};
        }
      } else if (slot.type == ValueType::kFloat) {
        out->any_float = consider_class("0.5");
        // SampleCategorical's probabilities: replay records doubles, so an integer
        // literal (an integer Arg) would not survive the round trip.
        out->float_nonnegative = true;
      } else if (slot.type == ValueType::kString && slot.name == "ann_key" &&
                 kind.kind == InstructionKind::Annotate) {
        if (consider_class("x")) {
          out->any_string = true;
          out->string_names = slot.names;
        }
        for (const ShortName& name : slot.names) consider(std::string(name.code));
      }
    };
    if (pos.decision) {
      std::vector<int64_t> candidates;
      if (kind.kind == InstructionKind::SamplePerfectTile) {
        auto d = complete_decision(*state_, kind, pos.values, pos.decision_values);
        if (d && pos.decision_values.size() < d->size()) {
          int64_t rest = 1;
          for (size_t i = pos.decision_values.size(); i < d->size(); ++i) rest *= (*d)[i];
          for (int64_t f = 1; f <= rest; ++f) {
            if (rest % f == 0) candidates.push_back(f);
          }
        }
      } else if (pos.decision_values.empty()) {
        const int64_t hi = kind.kind == InstructionKind::SampleCategorical
                               ? static_cast<int64_t>(list_size(pos.values.at(0))) - 1
                               : 40;
        for (int64_t v = kind.kind == InstructionKind::SampleCategorical ? 0 : -2; v <= hi; ++v) candidates.push_back(v);
      }
      for (int64_t v : candidates) consider(std::to_string(v));
    } else if (pos.list_open) {
      slot_values(kind.slots[pos.slot]);
      consider("]");
    } else {
      // The rest in progress may continue, or end and let the next slot begin.
      for (size_t s = pos.slot; s < kind.slots.size(); ++s) {
        const SlotSchema& slot = kind.slots[s];
        if (slot.shape == SlotShape::kList) {
          consider("[");
          break;
        }
        slot_values(slot);
        if (slot.shape != SlotShape::kRest) break;
      }
      if (kind.decision != DecisionShape::kNone) consider("=");
    }
  }
  std::sort(out->words.begin(), out->words.end());
  out->words.erase(std::unique(out->words.begin(), out->words.end()), out->words.end());
  if (first_only) return out;
  out->end_line = line_valid(pos);
  return out;
}

}  // namespace dragon::script::decoding
