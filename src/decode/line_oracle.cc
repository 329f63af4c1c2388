// LineOracle (line_oracle.h): the options at a position of a line, from the
// feasibility of the positions each next word leads to, memoized per position.
#include "line_oracle.h"

#include <algorithm>
#include <limits>

#include "dragon/ir/block_tree.h"
#include "script_words.h"

namespace dragon::decode {

using schedule::Arg;
using schedule::InstructionKind;
using schedule::RVType;
using script::all_kind_schemas;

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

}  // namespace

LineOracle::LineOracle(std::shared_ptr<const ReplayState> state, OracleCounters* counters, DecoderMemory* memory)
    : state_(std::move(state)),
      counters_(counters),
      memory_(memory),
      vars_(*state_),
      judge_(state_, counters, memory != nullptr ? &memory->judge_stats : nullptr),
      search_(vars_, judge_) {}

void LineOracle::set_shortcuts(bool on) {
  shortcuts_ = on;
  judge_.set_checks(on);
  search_.set_shortcuts(on);
}

bool LineOracle::operand_ruled_out(InstructionKind kind, size_t slot, const Arg& value, const std::vector<Arg>& before) {
  std::vector<Arg> values(before.begin(), before.end());
  values.resize(slot);
  values.push_back(value);
  return judge_.fails(script::kind_schema(kind), values);
}

bool LineOracle::feasible(const Position& pos) {
  if (pos.kind == nullptr) return true;
  std::string key = memo_key(pos);  // moved into the memo when done
  auto it = feasible_memo_.find(key);
  if (it != feasible_memo_.end()) return it->second;
  const bool mnemonic_only = pos.slot == 0 && pos.values.empty() && pos.elems.empty() && !pos.list_open && !pos.decision;
  const int kind_key = static_cast<int>(pos.kind->kind);
  bool result = false;
  if (mnemonic_only && memory_ != nullptr) {
    // A mnemonic alone: first the completion that applied for this kind before (one that
    // applies proves the line completes; one that fails proves nothing: the search
    // follows). Blockize's search tries the cheapest loops first, usually cheaper.
    auto w = memory_->witnesses.find(kind_key);
    const bool search_cheaper = shortcuts_ && pos.kind->kind == InstructionKind::Blockize;
    if (w != memory_->witnesses.end() && !search_cheaper) {
      Position q = pos;
      q.values = w->second.values;
      q.slot = q.values.size();
      result = judge_.applies(q, w->second.decision);
    }
  } else if (shortcuts_ && !pos.values.empty() && !defaulted_from(*pos.kind, pos.values.size()) &&
             judge_.prefix_ruled_out(*pos.kind, pos.values)) {
    // The operands written already fail, whatever the rest of the line. (Where the rest
    // is defaulted, the search judges the whole line at once anyway.)
    feasible_memo_.emplace(std::move(key), false);
    return false;
  }
  if (!result) {
    judge_.last_success().reset();
    result = search_.search(pos);
    if (result && mnemonic_only && memory_ != nullptr && judge_.last_success()) {
      memory_->witnesses[kind_key] = *judge_.last_success();
    }
  }
  feasible_memo_.emplace(std::move(key), result);
  return result;
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
  if (!judge_.applies(p, decision, next)) return false;
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

std::string LineOracle::memo_key(const Position& pos) const { return pos.text; }

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
      CompletionSearch::TypedPool built;
      // A variable admitted where the first of its class is (StateVariables::
      // is_representative; that one comes first in the pool): the position after it has
      // the same completions with the same outcomes. Then a position costs a search per
      // block, loop or value named, not per variable naming one.
      std::unordered_map<int64_t, bool> class_admitted;  // by the representative's id
      for (const auto& [value, word] : search_.typing_pool(pos, slot, built)) {
        const auto* rv = value.as<schedule::RandomVar>();
        if (!shortcuts_ || rv == nullptr) {
          consider(word);
          continue;
        }
        const int64_t representative = vars_.representative(value).as<schedule::RandomVar>()->id;
        auto known = class_admitted.find(representative);
        if (known != class_admitted.end()) {
          if (known->second && !stop()) out->words.push_back(word);
          continue;
        }
        if (stop()) continue;
        auto q = advance(pos, word);
        const bool admitted = q && feasible(*q);
        if (admitted) out->words.push_back(word);
        class_admitted.emplace(representative, admitted);
      }
      if (slot.type == ValueType::kCount) {
        // The count is what the lookup returns: try the counts it can be to learn it. A
        // lookup returns distinct loops or blocks of the function, so no more than it has
        // (a tiled convolution's block can have 74 loops above it).
        const ir::BlockTree& tree = state_->sch.tree();
        const auto most = static_cast<int64_t>(tree.blocks().size() + tree.loop_count());
        for (int64_t c = 0; c <= most && !stop(); ++c) {
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
        // Positive integer factors whose product (with the ones written, sampled variables at
        // their values) fits i32: a larger literal would leave the line with no valid end,
        // a dead end the sampler meets as "no token allowed".
        int64_t product = 1;
        for (const Arg& a : pos.elems) {
          int64_t factor = 1;
          if (const auto* i = a.as<int64_t>()) {
            factor = *i;
          } else if (const auto* rv = a.as<schedule::RandomVar>(); rv != nullptr && rv->type == schedule::RVType::kExpr) {
            try {
              factor = state_->sch.get(schedule::ExprRV{rv->id});
            } catch (const std::exception&) {
              factor = 1;  // not resolvable here: the line's replay judges it
            }
          }
          product = std::min<int64_t>(kInt32Max, product * std::clamp<int64_t>(factor, 1, kInt32Max));
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
        auto d = search_.complete_decision(kind, pos.values, pos.decision_values);
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

}  // namespace dragon::decode
