// The independent judges of script_judge.h: validity through the codec and a full
// replay, and a pruned brute-force enumeration of candidate lines.
#include "script_judge.h"

#include <functional>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/schedule/schedule.h"
#include "dragon/script/script.h"
#include "dragon/script/script_schema.h"

namespace dragon::script::testing {

using schedule::RVType;

bool script_valid(const ir::PrimFunc& func, const std::string& text) {
  try {
    if (!is_canonical(text)) return false;
    schedule::Trace trace = decode(text);
    schedule::Schedule sch = schedule::replay(trace, func);
    return encode(sch.trace()) == text;
  } catch (const std::exception&) {
    return false;
  }
}

namespace {

class BlockNames : public ir::StmtVisitor {
 public:
  std::vector<std::string> names;
  void visit_(const ir::BlockNode* op) override {
    names.push_back(op->name);
    ir::StmtVisitor::visit_(op);
  }
};

bool compatible(std::string_view text, std::string_view partial) {
  const size_t n = std::min(text.size(), partial.size());
  return text.substr(0, n) == partial.substr(0, n);
}

// Ordered factorizations of `extent` into `n` factors.
void tilings(int64_t extent, int n, std::vector<int64_t>& cur, std::vector<std::vector<int64_t>>& out) {
  if (static_cast<int>(cur.size()) == n - 1) {
    cur.push_back(extent);
    out.push_back(cur);
    cur.pop_back();
    return;
  }
  for (int64_t f = 1; f <= extent; ++f) {
    if (extent % f) continue;
    cur.push_back(f);
    tilings(extent / f, n, cur, out);
    cur.pop_back();
  }
}

}  // namespace

std::vector<std::string> candidate_lines(const ir::PrimFunc& func, const std::string& complete,
                                         std::string_view partial, size_t cap, int max_rest) {
  schedule::Schedule sch = schedule::replay(decode(complete), func);
  // The schedule's variable behind each per-type index, in definition order.
  std::vector<schedule::RandomVar> vars[3];
  for (const auto& inst : sch.trace().instructions()) {
    for (const auto& rv : inst.outputs) vars[static_cast<size_t>(rv.type)].push_back(rv);
  }
  BlockNames names;
  names.visit(sch.func()->body);
  auto rv_words = [&](RVType t) {
    std::vector<std::string> out;
    for (size_t i = 0; i <= vars[static_cast<size_t>(t)].size(); ++i) {  // one undefined too
      out.push_back(std::string(1, schedule::rv_prefix(t)) + std::to_string(i));
    }
    return out;
  };
  auto words_of = [&](const KindSchema& kind, const SlotSchema& slot) {
    std::vector<std::string> out;
    auto add = [&](std::vector<std::string> w) { out.insert(out.end(), w.begin(), w.end()); };
    switch (slot.type) {
      case ValueType::kBlock: add(rv_words(RVType::kBlock)); break;
      case ValueType::kLoop: add(rv_words(RVType::kLoop)); break;
      case ValueType::kExpr: add(rv_words(RVType::kExpr)); break;
      case ValueType::kBlockOrLoop:
        add(rv_words(RVType::kBlock));
        add(rv_words(RVType::kLoop));
        break;
      case ValueType::kInt:
        add({"-2", "-1", "0", "1", "2", "3", "4", "5", "8", "16", "64"});
        break;
      case ValueType::kCount:
        for (int c = 0; c <= 16; ++c) out.push_back(std::to_string(c));
        break;
      case ValueType::kBool: add({"true", "false"}); break;
      case ValueType::kFloat: add({"0.5", "1.0", "0.25"}); break;
      case ValueType::kString:
      case ValueType::kEnum:
        for (const auto& n : slot.names) out.emplace_back(n.code);
        if (slot.type == ValueType::kString) {
          for (const auto& n : names.names) out.push_back(n);
          add({"x", "main", "\"a b\""});
        }
        break;
      case ValueType::kSplitFactor:
        add({"None", "1", "2", "3", "4", "8", "16", "64"});
        add(rv_words(RVType::kExpr));
        break;
      case ValueType::kAnnValue:
        add({"0", "1", "16", "-3", "0.5", "true", "x", "\"a b\""});
        add(rv_words(RVType::kExpr));
        break;
      case ValueType::kOptionalNumber: add({"None", "0", "0.5"}); break;
    }
    (void)kind;
    return out;
  };
  std::vector<std::string> lines;
  // Slot by slot; each defaulted slot may also end the operands (the judge decides).
  std::function<void(const KindSchema&, size_t, std::string, std::vector<std::string>)> slots;
  auto finish = [&](const KindSchema& kind, const std::string& text, const std::vector<std::string>& written) {
    if (lines.size() >= cap || !compatible(text, partial)) return;
    if (kind.decision == DecisionShape::kNone) {
      lines.push_back(text + "\n");
      return;
    }
    std::vector<std::vector<int64_t>> decisions;
    if (kind.decision == DecisionShape::kInt) {
      for (int64_t d = -3; d <= 12; ++d) decisions.push_back({d});
    } else if (written.size() >= 2) {
      // The loop's extent from the schedule, n from the line.
      auto rv = parse_rv_name(written[0]);
      int n = std::stoi(written[1]);
      if (rv && rv->second < static_cast<int64_t>(vars[1].size()) && n >= 1 && n <= 6) {
        try {
          auto e = ir::as_const_int(sch.get(schedule::LoopRV{vars[1][rv->second].id})->extent);
          std::vector<int64_t> cur;
          if (e && *e >= 1) tilings(*e, n, cur, decisions);
        } catch (const std::exception&) {
        }
      }
      decisions.push_back({1});
    }
    for (const auto& d : decisions) {
      std::string t = text + " =";
      for (int64_t v : d) t += " " + std::to_string(v);
      if (compatible(t, partial) && lines.size() < cap) lines.push_back(t + "\n");
    }
  };
  slots = [&](const KindSchema& kind, size_t s, std::string text, std::vector<std::string> written) {
    if (lines.size() >= cap || !compatible(text, partial)) return;
    if (s == kind.slots.size()) {
      finish(kind, text, written);
      return;
    }
    const SlotSchema& slot = kind.slots[s];
    if (slot.default_kind != DefaultKind::kRequired) finish(kind, text, written);
    std::vector<std::string> pool = words_of(kind, slot);
    if (slot.shape == SlotShape::kSingle) {
      for (const std::string& w : pool) {
        auto next = written;
        next.push_back(w);
        slots(kind, s + 1, text + " " + w, next);
      }
      return;
    }
    if (slot.shape == SlotShape::kList) {
      for (std::string list : {"[]", "[1]", "[1 2 3 4]", "[0 16 64 512 1024]", "[0.5 0.5]", "[1.0]"}) {
        auto next = written;
        next.push_back(list);
        slots(kind, s + 1, text + " " + list, next);
      }
      return;
    }
    // A rest: 0..max_rest values.
    std::function<void(std::string, int)> rest = [&](std::string t, int count) {
      slots(kind, s + 1, t, written);
      if (count == max_rest) return;
      for (const std::string& w : pool) {
        std::string u = t + " " + w;
        if (compatible(u, partial)) rest(u, count + 1);
      }
    };
    rest(text, 0);
  };
  for (const KindSchema& kind : all_kind_schemas()) slots(kind, 0, std::string(kind.mnemonic), {});
  return lines;
}

}  // namespace dragon::script::testing
