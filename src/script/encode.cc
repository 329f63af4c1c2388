// Trace -> canonical compact script. Checks that every instruction fits its kind's schema
// (script_schema.h) and spells each slot by the rules of docs/script-format.md.
#include <map>

#include <fmt/format.h>

#include "dragon/script/script.h"
#include "dragon/script/script_schema.h"
#include "instruction_slots.h"
#include "lexer.h"

namespace dragon::script {

using schedule::Arg;
using schedule::Instruction;
using schedule::InstructionKind;
using schedule::None;
using schedule::RandomVar;
using schedule::RVType;

namespace {

class Encoder {
 public:
  std::string encode(const schedule::Trace& trace) {
    std::string out;
    for (size_t i = 0; i < trace.size(); ++i) {
      index_ = i;
      out += line(schedule::in_pinned_dialect(trace[i]), trace.decision(i));
      out += '\n';
    }
    return out;
  }

 private:
  [[noreturn]] void fail(InstructionKind kind, const std::string& message) const {
    detail::fail_instruction(index_, kind, message);
  }

  std::string spell(const Instruction& inst, const Arg& a, const SlotSchema& slot) const {
    struct Speller {
      const Encoder& self;
      const Instruction& inst;
      const SlotSchema& slot;
      std::string operator()(None) const { return "None"; }
      std::string operator()(bool v) const { return v ? "true" : "false"; }
      std::string operator()(int64_t v) const { return detail::spell_int(v); }
      std::string operator()(double v) const {
        auto text = detail::spell_float(v);
        if (!text) self.fail(inst.kind, fmt::format("{} is not finite", slot.name));
        return *text;
      }
      std::string operator()(const std::string& v) const { return detail::spell_string(v, slot.names, slot.type == ValueType::kEnum); }
      std::string operator()(const RandomVar& v) const {
        auto it = self.names_.find({v.type, v.id});
        if (it == self.names_.end()) {
          self.fail(inst.kind, fmt::format("input {} is not defined by an earlier instruction", schedule::rv_name(v)));
        }
        return fmt::format("{}{}", schedule::rv_prefix(v.type), it->second);
      }
      std::string operator()(const Arg::List&) const { return "[]"; }  // never: lists are unpacked by slot
    };
    return std::visit(Speller{*this, inst, slot}, a.value());
  }

  static bool equals_default(const SlotSchema& slot, const std::vector<Arg>& values,
                             const std::vector<std::vector<Arg>>& all, size_t slot_index) {
    switch (slot.default_kind) {
      case DefaultKind::kRequired: return false;
      case DefaultKind::kEmpty: return values.empty();
      case DefaultKind::kValue: return values.size() == 1 && values[0] == slot.default_value;
      case DefaultKind::kUniformProbs: {
        if (slot_index == 0) return false;
        const size_t n = all[slot_index - 1].size();
        if (values.size() != n) return false;
        for (const Arg& v : values) {
          if (!(v == Arg(1.0 / static_cast<double>(n)))) return false;
        }
        return true;
      }
    }
    return false;
  }

  std::string line(const Instruction& inst, const std::optional<Arg>& decision) {
    const KindSchema& schema = kind_schema(inst.kind);
    std::vector<std::vector<Arg>> values = detail::slot_values(inst, schema, index_);
    for (size_t s = 0; s < schema.slots.size(); ++s) {
      for (const Arg& a : values[s]) {
        if (!schedule::fits_value_type(a, schema.slots[s].type)) {
          fail(inst.kind, fmt::format("{} = {} is not {}", schema.slots[s].name, schedule::to_string(a),
                                      a.is<RandomVar>() ? "a variable of the right kind" : "of the slot's type"));
        }
      }
    }
    check_outputs(inst, schema, values);
    // Spell every slot, then drop the trailing run of defaults.
    size_t written = schema.slots.size();
    while (written > 0 && equals_default(schema.slots[written - 1], values[written - 1], values, written - 1)) --written;
    std::string out(schema.mnemonic);
    for (size_t s = 0; s < written; ++s) {
      const SlotSchema& slot = schema.slots[s];
      if (slot.shape == SlotShape::kList) {
        out += " [";
        for (size_t k = 0; k < values[s].size(); ++k) out += (k ? " " : "") + spell(inst, values[s][k], slot);
        out += "]";
      } else {
        for (const Arg& a : values[s]) out += " " + spell(inst, a, slot);
      }
    }
    if (decision) out += spell_decision(inst, schema, *decision);
    // Outputs are defined after the inputs are spelled (an instruction never uses its own).
    for (const RandomVar& rv : inst.outputs) {
      if (!names_.emplace(std::pair{rv.type, rv.id}, counts_[static_cast<size_t>(rv.type)]++).second) {
        fail(inst.kind, fmt::format("output {} is defined twice", schedule::rv_name(rv)));
      }
    }
    return out;
  }

  void check_outputs(const Instruction& inst, const KindSchema& schema,
                     const std::vector<std::vector<Arg>>& values) const {
    int64_t expected = 0;
    switch (schema.outputs.rule) {
      case OutputRule::kFixed: expected = schema.outputs.fixed_count; break;
      case OutputRule::kWritten: expected = static_cast<int64_t>(inst.outputs.size()); break;
      case OutputRule::kListLength: expected = static_cast<int64_t>(values[schema.outputs.slot].size()); break;
      case OutputRule::kFromSlot: expected = *values[schema.outputs.slot].at(0).as<int64_t>(); break;
    }
    if (static_cast<int64_t>(inst.outputs.size()) != expected) {
      fail(inst.kind, fmt::format("{} outputs where the schema implies {}", inst.outputs.size(), expected));
    }
    for (const RandomVar& rv : inst.outputs) {
      if (rv.type != schema.outputs.type) fail(inst.kind, fmt::format("output {} has the wrong type", schedule::rv_name(rv)));
    }
  }

  std::string spell_decision(const Instruction& inst, const KindSchema& schema, const Arg& decision) const {
    switch (schema.decision) {
      case DecisionShape::kNone: fail(inst.kind, "the kind takes no decision, but the trace records one");
      case DecisionShape::kInt:
        if (const auto* v = decision.as<int64_t>()) return " = " + detail::spell_int(*v);
        fail(inst.kind, fmt::format("decision {} is not an integer", schedule::to_string(decision)));
      case DecisionShape::kIntList: {
        const auto* list = decision.as<Arg::List>();
        if (list == nullptr) fail(inst.kind, fmt::format("decision {} is not a list", schedule::to_string(decision)));
        std::string out = " =";
        for (const Arg& a : *list) {
          const auto* v = a.as<int64_t>();
          if (v == nullptr) fail(inst.kind, fmt::format("decision {} is not a list of integers", schedule::to_string(decision)));
          out += " " + detail::spell_int(*v);
        }
        return out;
      }
    }
    return {};
  }

  // (type, id) of a trace's RV -> its per-type index in the script.
  std::map<std::pair<RVType, int64_t>, int64_t> names_;
  int64_t counts_[3] = {0, 0, 0};
  size_t index_ = 0;
};

}  // namespace

std::string encode(const schedule::Trace& trace) { return Encoder().encode(trace); }

}  // namespace dragon::script
