// CompletionSearch (completion_search.h): the completions tried per slot, chosen so that
// if any completion applies, one of them does (README.md); each judged by LineJudge.
#include "completion_search.h"

#include <algorithm>
#include <limits>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "script_words.h"

namespace dragon::decode {

using schedule::Arg;
using schedule::InstructionKind;
using schedule::RandomVar;
using schedule::RVType;
using script::ShortName;

namespace {

// The most tiles SamplePerfectTile is offered (an approximation: replay takes any n).
constexpr int64_t kMaxTiles = 16;

// The number of nodes of an expression.
class ExprSize : public ir::ExprVisitor {
 public:
  size_t nodes = 0;
  void visit_(const ir::IntImmNode*) override { ++nodes; }
  void visit_(const ir::FloatImmNode*) override { ++nodes; }
  void visit_(const ir::VarNode*) override { ++nodes; }
};

std::string rv_word(RVType type, size_t index) {
  std::string word(1, schedule::rv_prefix(type));
  word += std::to_string(index);
  return word;
}

}  // namespace

bool CompletionSearch::search(const Position& pos) {
  const KindSchema& kind = *pos.kind;
  const size_t n = kind.slots.size();
  if (pos.decision) {
    auto d = complete_decision(kind, pos.values, pos.decision_values);
    return d && judge_.applies(pos, d);
  }
  if (pos.list_open) {
    const SlotSchema& slot = kind.slots[pos.slot];
    std::vector<std::vector<Arg>> extensions = {{}};
    if (slot.default_kind == DefaultKind::kUniformProbs) {
      // Probabilities: as many as candidates; 1.0 each for the missing ones.
      const size_t want = list_size(pos.values.at(pos.slot - 1));
      if (pos.elems.size() > want) return false;
      extensions = {std::vector<Arg>(want - pos.elems.size(), Arg(1.0))};
    } else if (kind.kind == InstructionKind::PadEinsum) {
      // A padding of 1 grows nothing, and every precondition a growing dimension adds
      // only refuses more (pad_einsum.cc): ones up to the block's arity are the most
      // permissive completion.
      const std::optional<size_t> arity = pad_einsum_arity(pos);
      if (!arity || pos.elems.size() > *arity) return false;
      extensions = {std::vector<Arg>(*arity - pos.elems.size(), Arg(int64_t{1}))};
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
  const bool all_defaulted = defaulted_from(kind, pos.slot);
  if (all_defaulted && canonical_stop(kind, pos.values)) {
    if (kind.decision == DecisionShape::kNone) return judge_.applies(pos, std::nullopt);
    auto d = complete_decision(kind, pos.values, {});
    return d && judge_.applies(pos, d);
  }
  if (pos.slot >= n) return false;
  const SlotSchema& slot = kind.slots[pos.slot];
  if (shortcuts_ && later_slot_impossible(pos)) return false;
  std::vector<Arg> pool;
  if (all_defaulted) {
    // Stopping is not canonical: the next slot must be written with another value.
    const Arg default_value = default_of(kind, pos.slot, pos.values);
    TypedPool built;
    for (const auto& [value, word] : typing_pool(pos, slot, built)) {
      if (!(value == default_value) && (!shortcuts_ || vars_.is_representative(value))) pool.push_back(value);
    }
  } else if (slot.shape == SlotShape::kList && kind.kind == InstructionKind::PadEinsum) {
    // All ones (no growth): valid whenever any padding is (see the open list above).
    const std::optional<size_t> arity = pad_einsum_arity(pos);
    if (!arity) return false;
    pool = {Arg(Arg::List(*arity, Arg(int64_t{1})))};
  } else if (slot.shape == SlotShape::kList) {
    pool = {Arg(Arg::List{Arg(int64_t{0})})};  // SampleCategorical's candidates
  } else {
    pool = completion_pool(pos, slot);
  }
  if (shortcuts_ && kind.kind == InstructionKind::Blockize && pos.slot == 0) order_blockize_pool(pool);
  // Where later slots are still to be chosen, a value the schedule's check rules out with
  // them unknown is not searched further (where the rest is defaulted, the completion is
  // judged at once anyway).
  const bool rule_out = shortcuts_ && !defaulted_from(kind, pos.slot + 1);
  std::vector<Arg> prefix;
  if (rule_out) {
    prefix.reserve(pos.values.size() + 1);
    prefix.assign(pos.values.begin(), pos.values.end());
    prefix.emplace_back();
  }
  for (Arg& v : pool) {
    if (rule_out) {
      prefix.back() = v;
      if (judge_.prefix_ruled_out(kind, prefix)) continue;
    }
    Position q = copy_for_extension(pos, 2);
    q.values.push_back(v);
    ++q.slot;
    q.text += " ?";  // completions are never memoized under a real text
    if (search(q)) return true;
  }
  return false;
}

void CompletionSearch::order_blockize_pool(std::vector<Arg>& pool) const {
  auto cost = [&](const Arg& a) {
    std::pair<size_t, size_t> c{0, 0};
    const ir::StmtNode* node = vars_.loop(a);
    if (node == nullptr) return c;
    for (; node->kind == ir::NodeKind::For; node = static_cast<const ir::ForNode*>(node)->body.get()) ++c.second;
    if (node->kind == ir::NodeKind::BlockRealize) {
      ExprSize size;
      for (const ir::Expr& e : static_cast<const ir::BlockRealizeNode*>(node)->iter_values) size.visit(e);
      c.first = size.nodes;
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

bool CompletionSearch::later_slot_impossible(const Position& pos) {
  // Only string slots whose completions read no earlier value qualify: every one but
  // Unannotate's key (the target's keys are offered).
  const KindSchema& kind = *pos.kind;
  for (size_t s = pos.slot + 1; s < kind.slots.size(); ++s) {
    const SlotSchema& later = kind.slots[s];
    if (later.default_kind != DefaultKind::kRequired || later.shape != SlotShape::kSingle ||
        later.type != ValueType::kString || kind.kind == InstructionKind::Unannotate)
      continue;
    const size_t key = static_cast<size_t>(kind.kind) * 64 + s;
    auto known = impossible_.find(key);
    if (known == impossible_.end()) {
      bool impossible = true;
      std::vector<Arg> values(s + 1);
      for (Arg& value : completion_pool(pos, later)) {
        values[s] = std::move(value);
        impossible &= judge_.fails(kind, values, s);
      }
      known = impossible_.emplace(key, impossible).first;
    }
    if (known->second) return true;
  }
  return false;
}

const CompletionSearch::TypedPool& CompletionSearch::typing_pool(const Position& pos, const SlotSchema& slot,
                                                                 TypedPool& built) const {
  // Slots of random variables only: their pool depends on the state alone, so it is built
  // once per state and lent, not copied (searches ask for it at every level). rv_pools_
  // only grows, and an unordered_map keeps its elements in place: the reference stays valid.
  const bool rv_slot = slot.type == ValueType::kBlock || slot.type == ValueType::kLoop ||
                       slot.type == ValueType::kExpr || slot.type == ValueType::kBlockOrLoop;
  if (rv_slot) {
    const auto key = static_cast<size_t>(slot.type);
    auto it = rv_pools_.find(key);
    if (it == rv_pools_.end()) it = rv_pools_.emplace(key, build_typing_pool(pos, slot)).first;
    return it->second;
  }
  built = build_typing_pool(pos, slot);
  return built;
}

std::optional<size_t> CompletionSearch::pad_einsum_arity(const Position& pos) const {
  const ReplayState& st = vars_.state();
  const auto* rv = pos.values.empty() ? nullptr : pos.values.front().as<RandomVar>();
  if (rv == nullptr || rv->type != RVType::kBlock || !st.sch.is_valid(*rv)) return std::nullopt;
  return st.sch.get(schedule::BlockRV{rv->id})->iter_vars.size();
}

CompletionSearch::TypedPool CompletionSearch::build_typing_pool(const Position& pos, const SlotSchema& slot) const {
  TypedPool out;
  const ReplayState& st = vars_.state();
  // The variables that still resolve, and the location marks (which name no loop: only the
  // primitives that take them accept them).
  auto add_rvs = [&](RVType type) {
    const auto& vars = st.vars[static_cast<size_t>(type)];
    for (size_t i = 0; i < vars.size(); ++i) {
      const bool mark = type == RVType::kLoop && st.loop_is_location[i];
      if (type == RVType::kExpr || mark || vars_.is_valid(type, i)) {
        std::pair<Arg, std::string>& added = out.emplace_back();
        added.first = Arg(vars[i]);
        added.second = rv_word(type, i);
      }
    }
  };
  // The block's reads or writes (buffer indexes are typed below their count).
  auto buffer_count = [&](bool reads) -> int64_t {
    const auto* rv = pos.values.at(0).as<RandomVar>();
    if (rv == nullptr || !st.sch.is_valid(*rv)) return 0;
    const ir::BlockNode* block = st.sch.get(schedule::BlockRV{rv->id});
    return static_cast<int64_t>(reads ? block->reads.size() : block->writes.size());
  };
  auto add_ints = [&](int64_t lo, int64_t hi) {
    for (int64_t v = lo; v <= hi; ++v) {
      std::pair<Arg, std::string>& added = out.emplace_back();
      added.first = Arg(v);
      added.second = std::to_string(v);
    }
  };
  const InstructionKind kind = pos.kind->kind;
  switch (slot.type) {
    case ValueType::kBlock: add_rvs(RVType::kBlock); break;
    case ValueType::kLoop: add_rvs(RVType::kLoop); break;
    case ValueType::kExpr: add_rvs(RVType::kExpr); break;
    case ValueType::kBlockOrLoop:
      add_rvs(RVType::kBlock);
      add_rvs(RVType::kLoop);
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
        for (const ir::BlockTree::BlockInfo& b : st.sch.tree().blocks()) {
          out.emplace_back(Arg(b.block->name), spell_string(b.block->name, {}));
        }
      } else if (slot.name == "ann_key" && kind == InstructionKind::Unannotate) {
        // The keys the target has now.
        const auto* target = pos.values.at(0).as<RandomVar>();
        const ir::Annotations* annotations = nullptr;
        if (target != nullptr && st.sch.is_valid(*target)) {
          annotations = target->type == RVType::kBlock ? &st.sch.get(schedule::BlockRV{target->id})->annotations
                                                       : &st.sch.get(schedule::LoopRV{target->id})->annotations;
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
      else if (slot.name == "buffer_index" && (pos.kind->kind == InstructionKind::ReIndex ||
                                                pos.kind->kind == InstructionKind::TransformLayout)) {
        // A read's or a write's index: buffer_index_type, written after it, says which.
        add_ints(0, std::max(buffer_count(true), buffer_count(false)) - 1);
      } else if (slot.name == "write_buffer_index" || slot.name == "buffer_index") {
        add_ints(0, buffer_count(false) - 1);
      } else if (pos.kind->kind == InstructionKind::PadEinsum) {
        // Paddings: small ones, and the tiles of the tensor-core rules (wgmma's 64 x N x 64).
        add_ints(0, 16);
        for (int64_t tile : {32, 64, 128, 256}) out.emplace_back(Arg(tile), std::to_string(tile));
      }
      else add_ints(0, 16);
      break;
    case ValueType::kCount: break;  // the lookup's own count: see LineOracle::options
    case ValueType::kSplitFactor:
      out.emplace_back(Arg(schedule::None{}), "None");
      add_rvs(RVType::kExpr);
      break;
    case ValueType::kAnnValue:
      out.emplace_back(Arg(true), "true");
      out.emplace_back(Arg(false), "false");
      add_rvs(RVType::kExpr);
      break;
    case ValueType::kFloat: break;
    case ValueType::kOptionalNumber: out.emplace_back(Arg(schedule::None{}), "None"); break;
  }
  return out;
}

std::vector<Arg> CompletionSearch::completion_pool(const Position& pos, const SlotSchema& slot) const {
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
  // One variable per class (StateVariables::is_representative): the others have the
  // same outcomes.
  TypedPool built;
  const TypedPool& typed = typing_pool(pos, slot, built);
  out.reserve(typed.size());
  for (const auto& [value, word] : typed) {
    if (!shortcuts_ || vars_.is_representative(value)) out.push_back(value);
  }
  return out;
}

std::vector<std::vector<Arg>> CompletionSearch::rest_extensions(const Position& pos, const SlotSchema& slot) const {
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

std::optional<std::vector<int64_t>> CompletionSearch::complete_decision(const KindSchema& kind,
                                                                       const std::vector<Arg>& values,
                                                                       const std::vector<int64_t>& prefix) const {
  switch (kind.kind) {
    case InstructionKind::SamplePerfectTile: {
      const int64_t n = *values.at(1).as<int64_t>();
      if (n < 1 || n > kMaxTiles || static_cast<int64_t>(prefix.size()) > n) return std::nullopt;
      const ir::ForNode* loop = vars_.loop(values.at(0));
      auto extent_value = loop != nullptr ? ir::as_const_int(loop->extent) : std::nullopt;
      if (!extent_value) return std::nullopt;
      const int64_t extent = *extent_value;
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

}  // namespace dragon::decode
