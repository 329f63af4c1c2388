// Trace bookkeeping, replay, decision changes, simplification and canonical renaming.
#include "dragon/schedule/trace.h"

#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "dragon/schedule/schedule.h"
#include "instruction_apply.h"

namespace dragon::schedule {

void Trace::append(Instruction inst, std::optional<Arg> decision) {
  if (decision) decisions_[insts_.size()] = std::move(*decision);
  insts_.push_back(std::move(inst));
}

std::optional<Arg> Trace::decision(size_t index) const {
  auto it = decisions_.find(index);
  if (it == decisions_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> Trace::postproc_start() const {
  for (size_t i = 0; i < insts_.size(); ++i) {
    if (insts_[i].kind == InstructionKind::EnterPostproc) return i;
  }
  return std::nullopt;
}

Trace Trace::without_postproc() const {
  size_t end = postproc_start().value_or(insts_.size());
  Trace out;
  for (size_t i = 0; i < end; ++i) out.append(insts_[i], decision(i));
  return out;
}

Trace Trace::with_decision(size_t index, Arg decision, bool remove_postproc) const {
  Trace out = remove_postproc ? without_postproc() : *this;
  DRAGON_CHECK(index < out.size(), "with_decision at instruction {} of a trace of {}", index, out.size());
  DRAGON_CHECK(decisions_.count(index), "with_decision at instruction {} ({}), which has no decision", index,
               instruction_kind_name(insts_[index].kind));
  out.decisions_[index] = std::move(decision);
  return out;
}

namespace {

void collect_rvs(const Arg& arg, std::set<int64_t>& used) {
  if (const auto* rv = arg.as<RandomVar>()) used.insert(rv->id);
  if (const auto* list = arg.as<Arg::List>()) {
    for (const Arg& a : *list) collect_rvs(a, used);
  }
}

}  // namespace

Trace Trace::simplified(bool remove_postproc) const {
  const Trace source = remove_postproc ? without_postproc() : *this;
  std::vector<bool> keep(source.size(), true);
  std::set<int64_t> used;
  for (size_t i = source.size(); i-- > 0;) {
    const Instruction& inst = source.insts_[i];
    if (instruction_kind_is_pure(inst.kind)) {
      bool any_used = false;
      for (const RandomVar& out : inst.outputs) any_used |= used.count(out.id) > 0;
      if (!any_used) {
        keep[i] = false;
        continue;
      }
    }
    for (const Arg& a : inst.inputs) collect_rvs(a, used);
  }
  Trace out;
  for (size_t i = 0; i < source.size(); ++i) {
    if (keep[i]) out.append(source.insts_[i], source.decision(i));
  }
  return out;
}

namespace {

// Maps the random variables of recorded instructions to those of the replaying schedule.
class RVMap {
 public:
  Arg translate(const Arg& arg, size_t index, const Instruction& inst) const {
    if (const auto* rv = arg.as<RandomVar>()) {
      auto it = map_.find(rv->id);
      if (it == map_.end() || it->second.type != rv->type) {
        throw UserError(fmt::format("instruction {} ({}): input {} is not defined by an earlier instruction", index,
                                    instruction_kind_name(inst.kind), rv_name(*rv)));
      }
      return Arg(it->second);
    }
    if (const auto* list = arg.as<Arg::List>()) {
      Arg::List out;
      for (const Arg& a : *list) out.push_back(translate(a, index, inst));
      return Arg(std::move(out));
    }
    return arg;
  }
  void define(const RandomVar& recorded, const RandomVar& fresh) { map_[recorded.id] = fresh; }

 private:
  std::map<int64_t, RandomVar> map_;
};

}  // namespace

void Trace::apply_to(Schedule& sch, bool remove_postproc, const DecisionProvider& decide) const {
  RVMap rvs;
  for (size_t i = 0; i < insts_.size(); ++i) {
    const Instruction& inst = insts_[i];
    if (remove_postproc && inst.kind == InstructionKind::EnterPostproc) break;
    std::vector<Arg> inputs;
    for (const Arg& a : inst.inputs) inputs.push_back(rvs.translate(a, i, inst));
    std::optional<Arg> d = decision(i);
    if (decide) d = decide(i, inst, d);
    std::vector<RandomVar> outputs;
    try {
      outputs = detail::replay(sch, inst.kind, inputs, inst.attrs, d);
    } catch (const ScheduleError&) {
      throw;
    } catch (const UserError& e) {
      throw UserError(fmt::format("instruction {} ({}): {}", i, instruction_kind_name(inst.kind), e.what()));
    }
    if (outputs.size() != inst.outputs.size()) {
      throw UserError(fmt::format("instruction {} ({}): records {} outputs, replay made {}", i,
                                  instruction_kind_name(inst.kind), inst.outputs.size(), outputs.size()));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].type != inst.outputs[k].type) {
        throw UserError(fmt::format("instruction {} ({}): output {} has the wrong type", i,
                                    instruction_kind_name(inst.kind), rv_name(inst.outputs[k])));
      }
      rvs.define(inst.outputs[k], outputs[k]);
    }
  }
}

Trace Trace::canonical() const {
  std::map<int64_t, int64_t> renumber;
  auto number = [&](const RandomVar& rv) {
    auto [it, inserted] = renumber.emplace(rv.id, static_cast<int64_t>(renumber.size()));
    return RandomVar{rv.type, it->second};
  };
  std::function<Arg(const Arg&)> rename = [&](const Arg& a) -> Arg {
    if (const auto* rv = a.as<RandomVar>()) return Arg(number(*rv));
    if (const auto* list = a.as<Arg::List>()) {
      Arg::List out;
      for (const Arg& x : *list) out.push_back(rename(x));
      return Arg(std::move(out));
    }
    return a;
  };
  Trace out;
  for (size_t i = 0; i < insts_.size(); ++i) {
    Instruction inst = insts_[i];
    for (Arg& a : inst.inputs) a = rename(a);
    for (RandomVar& rv : inst.outputs) rv = number(rv);
    out.append(std::move(inst), decision(i));
  }
  return out;
}

bool operator==(const Trace& a, const Trace& b) {
  Trace ca = a.canonical(), cb = b.canonical();
  return ca.insts_ == cb.insts_ && ca.decisions_ == cb.decisions_;
}

std::string Trace::to_string() const {
  std::string out;
  for (size_t i = 0; i < insts_.size(); ++i) {
    out += schedule::to_string(insts_[i]);
    if (auto d = decision(i)) out += " decision=" + schedule::to_string(*d);
    out += "\n";
  }
  return out;
}

}  // namespace dragon::schedule
