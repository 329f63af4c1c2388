// Reading a line word by word into slots (line_position.h), and the instruction a line or
// its prefix stands for.
#include "line_position.h"

#include "dragon/support/error.h"
#include "script_words.h"

namespace dragon::decode {

using schedule::Arg;
using schedule::RandomVar;
using schedule::RVType;
using script::find_mnemonic;
using script::parse_rv_name;

namespace {

Arg uniform_probs(size_t n) {
  Arg::List list;
  for (size_t i = 0; i < n; ++i) list.push_back(Arg(1.0 / static_cast<double>(n)));
  return Arg(std::move(list));
}

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

}  // namespace

bool has_default(const SlotSchema& s) { return s.default_kind != DefaultKind::kRequired; }

bool defaulted_from(const KindSchema& kind, size_t first) {
  for (size_t s = first; s < kind.slots.size(); ++s) {
    if (!has_default(kind.slots[s])) return false;
  }
  return true;
}

size_t list_size(const Arg& a) {
  const auto* list = a.as<Arg::List>();
  return list ? list->size() : 0;
}

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

// Closes the rest slot in progress, if any.
void finish_rest(const KindSchema& kind, Position& p) {
  if (p.slot < kind.slots.size() && kind.slots[p.slot].shape == SlotShape::kRest) {
    p.values.push_back(Arg(std::move(p.elems)));
    p.elems.clear();
    ++p.slot;
  }
}


std::optional<Position> read_word(const ReplayState& state, const Position& pos, std::string_view word) {
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
    auto v = read_value(state, kind.slots[p.slot], word);
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
        if (auto v = read_value(state, slot, word)) {
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
    auto v = read_value(state, slot, word);
    if (!v) return std::nullopt;
    p.values.push_back(std::move(*v));
    ++p.slot;
    return p;
  }
  return std::nullopt;
}

void fill_draft(Draft& out, const KindSchema& kind, const std::vector<Arg>& written, bool complete,
                size_t first_known) {
  out.inst.kind = kind.kind;
  std::vector<Arg>& inputs = out.inst.inputs;
  std::vector<Arg>& attrs = out.inst.attrs;
  inputs.clear();
  attrs.clear();
  out.known = complete ? schedule::KnownOperands{} : schedule::KnownOperands{0, 0};
  out.count.reset();
  const size_t given = complete ? kind.slots.size() : written.size();
  Arg defaulted;  // the slot's default, when the line omits it
  const Arg* previous = nullptr;
  for (size_t s = 0; s < given; ++s) {
    const SlotSchema& slot = kind.slots[s];
    const Arg* value = &defaulted;
    if (s < written.size()) {
      value = &written[s];
    } else if (slot.default_kind == DefaultKind::kUniformProbs) {
      defaulted = uniform_probs(previous != nullptr ? list_size(*previous) : 0);
    } else {
      defaulted = default_of(kind, s, written);
    }
    previous = value;
    if (s < first_known) continue;
    const auto index = static_cast<size_t>(slot.index);
    switch (slot.source) {
      case SlotSource::kInput:
        if (inputs.size() <= index) inputs.resize(index + 1);
        inputs[index] = *value;
        out.known.inputs |= uint64_t{1} << index;
        break;
      case SlotSource::kAttr:
        if (attrs.size() <= index) attrs.resize(index + 1);
        attrs[index] = *value;
        out.known.attrs |= uint64_t{1} << index;
        break;
      case SlotSource::kInputsFrom:
        if (inputs.size() < index) inputs.resize(index);
        for (const Arg& a : *value->as<Arg::List>()) inputs.push_back(a);
        out.known.inputs |= ~uint64_t{0} << index;  // the list runs to the end
        break;
      case SlotSource::kOutputCount: out.count = *value->as<int64_t>(); break;
    }
  }
}

}  // namespace dragon::decode
