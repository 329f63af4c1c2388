// TVM's Python text form of a trace, driven by the script schema's slot names (TVM's
// keywords). For comparison only: there is no reader.
#include "dragon/script/trace_python.h"

#include <fmt/format.h>

#include "dragon/script/script.h"
#include "dragon/script/script_schema.h"
#include "instruction_slots.h"
#include "lexer.h"

namespace dragon::script {

using schedule::Arg;
using schedule::RandomVar;

namespace {

std::string python_value(const Arg& a) {
  struct Writer {
    std::string operator()(schedule::None) const { return "None"; }
    std::string operator()(bool v) const { return v ? "True" : "False"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return detail::spell_float(v).value_or("nan"); }
    std::string operator()(const std::string& v) const { return detail::quote(v); }
    std::string operator()(const RandomVar& v) const { return schedule::rv_name(v); }
    std::string operator()(const Arg::List& v) const {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + python_value(v[i]);
      return out + "]";
    }
  };
  return std::visit(Writer{}, a.value());
}

}  // namespace

std::string trace_to_python(const schedule::Trace& trace) {
  encode(trace);  // the same schema checks, with the same errors
  const schedule::Trace t = trace.canonical();
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    const schedule::Instruction inst = schedule::in_pinned_dialect(t[i]);
    const KindSchema& schema = kind_schema(inst.kind);
    std::vector<std::vector<Arg>> values = detail::slot_values(inst, schema, i);
    std::string line;
    for (size_t k = 0; k < inst.outputs.size(); ++k) line += (k ? ", " : "") + schedule::rv_name(inst.outputs[k]);
    if (!inst.outputs.empty()) line += " = ";
    line += fmt::format("sch.{}(", schema.python_name);
    std::string args;
    auto add = [&](const std::string& a) { args += (args.empty() ? "" : ", ") + a; };
    for (size_t s = 0; s < schema.slots.size(); ++s) {
      const SlotSchema& slot = schema.slots[s];
      if (slot.source == SlotSource::kOutputCount) continue;  // Python unpacks the outputs
      if (slot.shape == SlotShape::kRest && slot.source == SlotSource::kInputsFrom && s == 0) {
        for (const Arg& a : values[s]) add(python_value(a));  // fuse(*loops), reorder(*loops)
        continue;
      }
      Arg value = slot.shape == SlotShape::kSingle ? values[s][0] : Arg(Arg::List(values[s]));
      add(fmt::format("{}={}", slot.name, python_value(value)));
    }
    if (auto d = t.decision(i)) add("decision=" + python_value(*d));
    out += line + args + ")\n";
  }
  return out;
}

}  // namespace dragon::script
