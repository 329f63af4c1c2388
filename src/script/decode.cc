// Compact script -> Trace, one line at a time against the random variables defined so
// far. Each error names the line, the column and what was expected there.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/script/script.h"
#include "dragon/script/script_schema.h"
#include "lexer.h"

namespace dragon::script {

using detail::Token;
using detail::TokenKind;
using schedule::Arg;
using schedule::Instruction;
using schedule::RandomVar;
using schedule::RVType;

ScriptError::ScriptError(int line, int column, std::string message)
    : UserError(fmt::format("{}:{}: {}", line, column, message)), line_(line), column_(column),
      message_(std::move(message)) {}

namespace {

// More outputs than any real trace has; a bigger count is a typo, not an allocation.
constexpr int64_t kMaxOutputs = 4096;

std::string_view type_name(ValueType type) {
  switch (type) {
    case ValueType::kBlock: return "a block variable (b<k>)";
    case ValueType::kLoop: return "a loop variable (l<k>)";
    case ValueType::kExpr: return "an expression variable (v<k>)";
    case ValueType::kBlockOrLoop: return "a block or loop variable";
    case ValueType::kInt: return "an integer";
    case ValueType::kFloat: return "a number";
    case ValueType::kBool: return "true or false";
    case ValueType::kString: return "a string";
    case ValueType::kEnum: return "one of its names";
    case ValueType::kSplitFactor: return "an integer, an expression variable or None";
    case ValueType::kAnnValue: return "a number, a bool, a string or an expression variable";
    case ValueType::kCount: return "an output count";
    case ValueType::kOptionalNumber: return "a number or None";
  }
  return "a value";
}

std::string_view rv_kind_name(RVType type) {
  switch (type) {
    case RVType::kBlock: return "block";
    case RVType::kLoop: return "loop";
    case RVType::kExpr: return "expression";
  }
  return "?";
}

std::string names_list(std::span<const ShortName> names) {
  std::string out;
  for (const ShortName& n : names) out += (out.empty() ? "" : " ") + std::string(n.code);
  return out;
}

}  // namespace

struct LineDecoder::Decoded {
  std::optional<Instruction> inst;
  std::optional<Arg> decision;
};

namespace {

// Parses the tokens of one instruction line against a kind's schema and an environment.
class LineParser {
 public:
  LineParser(int line_number, std::string_view line, std::vector<Token> tokens, const int64_t (&counts)[3],
             const std::vector<RandomVar> (&vars)[3], int64_t next_id)
      : line_number_(line_number), line_(line), tokens_(std::move(tokens)), counts_(counts), vars_(vars),
        next_id_(next_id) {}

  std::pair<Instruction, std::optional<Arg>> parse() {
    const Token& head = tokens_[0];
    if (head.kind != TokenKind::kWord) fail(head, fmt::format("expected a mnemonic, got '{}'", head.text));
    const KindSchema* schema = find_mnemonic(head.text);
    if (schema == nullptr) fail(head, fmt::format("unknown mnemonic '{}'", head.text));
    schema_ = schema;
    pos_ = 1;
    std::vector<std::vector<Arg>> values(schema->slots.size());
    int last_written = -1;
    for (size_t s = 0; s < schema->slots.size(); ++s) {
      const SlotSchema& slot = schema->slots[s];
      if (at_operands_end()) {
        if (slot.default_kind == DefaultKind::kRequired) {
          fail_at(end_column(), fmt::format("missing operand {} ({}): {} takes {}", s + 1, slot.name, schema->mnemonic,
                                            signature()));
        }
        values[s] = default_values(slot, values, s);
        continue;
      }
      if (slot.shape == SlotShape::kRest) {
        while (!at_operands_end() && could_be_element(tokens_[pos_], slot.type)) {
          values[s].push_back(value(slot));
          last_written = static_cast<int>(s);
        }
      } else if (slot.shape == SlotShape::kList) {
        values[s] = list(slot);
        last_written = static_cast<int>(s);
      } else {
        values[s].push_back(value(slot));
        last_written = static_cast<int>(s);
      }
      written_at_.push_back(tokens_[pos_ - 1].column);
    }
    if (!at_operands_end()) {
      fail(tokens_[pos_], fmt::format("unexpected operand '{}': {} takes {}", tokens_[pos_].text, schema->mnemonic,
                                      signature()));
    }
    check_no_trailing_default(values, last_written);
    std::optional<Arg> decision;
    if (pos_ < tokens_.size()) decision = parse_decision();
    Instruction inst = build(values);
    return {std::move(inst), std::move(decision)};
  }

 private:
  [[noreturn]] void fail_at(int column, std::string message) const {
    throw ScriptError(line_number_, column, std::move(message));
  }
  [[noreturn]] void fail(const Token& t, std::string message) const { fail_at(t.column, std::move(message)); }
  // Where something missing would have started: the '=' that ends the operands, or one
  // past the last token.
  int end_column() const {
    if (pos_ < tokens_.size()) return tokens_[pos_].column;
    return tokens_.back().column + static_cast<int>(tokens_.back().text.size());
  }

  std::string signature() const {
    std::string out;
    int required = 0;
    for (const SlotSchema& slot : schema_->slots) {
      out += (out.empty() ? "" : ", ") + std::string(slot.name);
      if (slot.shape == SlotShape::kRest) out += "...";
      if (slot.default_kind == DefaultKind::kRequired) ++required;
    }
    if (out.empty()) return "no operands";
    return fmt::format("{} operand{} ({})", required, required == 1 ? "" : "s", out);
  }

  bool at_operands_end() const { return pos_ >= tokens_.size() || tokens_[pos_].kind == TokenKind::kEquals; }

  // Whether a token belongs to a rest of `type` (the rest stops at the first that cannot).
  static bool could_be_element(const Token& t, ValueType type) {
    if (t.kind == TokenKind::kWord && parse_rv_name(t.text)) return true;
    // An RV-shaped word with a leading zero is still meant as one: report it in the rest.
    if (t.kind == TokenKind::kWord && t.text.size() >= 2 && std::string_view("blv").find(t.text[0]) != std::string_view::npos &&
        std::all_of(t.text.begin() + 1, t.text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return true;
    }
    if (type == ValueType::kSplitFactor) return t.kind == TokenKind::kNumber || t.text == "None";
    return false;
  }

  std::vector<Arg> default_values(const SlotSchema& slot, const std::vector<std::vector<Arg>>& values, size_t s) const {
    switch (slot.default_kind) {
      case DefaultKind::kValue: return {slot.default_value};
      case DefaultKind::kUniformProbs: {
        const size_t n = values[s - 1].size();
        return std::vector<Arg>(n, Arg(1.0 / static_cast<double>(n)));
      }
      case DefaultKind::kEmpty:
      case DefaultKind::kRequired: return {};
    }
    return {};
  }

  std::vector<Arg> list(const SlotSchema& slot) {
    const Token& open = tokens_[pos_];
    if (open.kind != TokenKind::kOpen) fail(open, fmt::format("expected '[' to start {}, a list", slot.name));
    ++pos_;
    std::vector<Arg> out;
    while (true) {
      if (pos_ >= tokens_.size()) fail_at(end_column(), fmt::format("the line ends inside the list {} (missing ']')", slot.name));
      if (tokens_[pos_].kind == TokenKind::kClose) {
        ++pos_;
        return out;
      }
      out.push_back(value(slot));
    }
  }

  RandomVar variable(const Token& t, ValueType type) const {
    auto rv = parse_rv_name(t.text);
    if (!rv) fail(t, fmt::format("bad variable name '{}' (no leading zeros)", t.text));
    auto [rv_type, index] = *rv;
    bool ok = (type == ValueType::kBlock && rv_type == RVType::kBlock) ||
              (type == ValueType::kLoop && rv_type == RVType::kLoop) ||
              (type == ValueType::kBlockOrLoop && rv_type != RVType::kExpr) ||
              ((type == ValueType::kExpr || type == ValueType::kSplitFactor || type == ValueType::kAnnValue) &&
               rv_type == RVType::kExpr);
    const size_t k = static_cast<size_t>(rv_type);
    if (index >= counts_[k]) {
      fail(t, fmt::format("undefined variable {}: {} {} variable{} defined so far", t.text, counts_[k],
                          rv_kind_name(rv_type), counts_[k] == 1 ? " is" : "s are"));
    }
    if (!ok) fail(t, fmt::format("{} is a {} variable, expected {}", t.text, rv_kind_name(rv_type), type_name(type)));
    return vars_[k][static_cast<size_t>(index)];
  }

  Arg number(const Token& t, bool allow_float) const {
    if (detail::is_float_text(t.text)) {
      if (!allow_float) fail(t, fmt::format("bad number '{}': expected an integer", t.text));
      auto v = detail::parse_float(t.text);
      if (!v) fail(t, fmt::format("bad number '{}': out of range", t.text));
      std::string canonical = *detail::spell_float(*v);
      if (canonical != t.text) fail(t, fmt::format("non-canonical number '{}': write {}", t.text, canonical));
      return Arg(*v);
    }
    auto v = detail::parse_int(t.text);
    if (!v) fail(t, fmt::format("bad number '{}': out of the 64-bit range", t.text));
    std::string canonical = detail::spell_int(*v);
    if (canonical != t.text) fail(t, fmt::format("non-canonical number '{}': write {}", t.text, canonical));
    return Arg(*v);
  }

  Arg string(const Token& t, const SlotSchema& slot) const {
    if (t.kind == TokenKind::kString) {
      std::string canonical = detail::spell_string(t.value, slot.names, slot.type == ValueType::kEnum);
      if (canonical != t.text) fail(t, fmt::format("non-canonical string {}: write {}", t.text, canonical));
      return Arg(t.value);
    }
    for (const ShortName& n : slot.names) {
      if (n.code == t.text) return Arg(std::string(n.full));
    }
    if (slot.type == ValueType::kEnum) {
      fail(t, fmt::format("unknown {} '{}': one of {} (other strings quoted)", slot.name, t.text, names_list(slot.names)));
    }
    return Arg(std::string(t.text));
  }

  // One value of `slot`'s type at pos_.
  Arg value(const SlotSchema& slot) {
    const Token& t = tokens_[pos_];
    const ValueType type = slot.type;
    auto expected = [&]() -> std::string {
      return fmt::format("expected {} for {}, got '{}'", type_name(type), slot.name, t.text);
    };
    if (t.kind == TokenKind::kOpen || t.kind == TokenKind::kClose || t.kind == TokenKind::kEquals) fail(t, expected());
    ++pos_;
    const bool rv_word = t.kind == TokenKind::kWord && could_be_element(t, ValueType::kBlock);
    switch (type) {
      case ValueType::kBlock:
      case ValueType::kLoop:
      case ValueType::kExpr:
      case ValueType::kBlockOrLoop:
        if (!rv_word) fail(t, expected());
        return Arg(variable(t, type));
      case ValueType::kInt:
      case ValueType::kCount:
        if (t.kind != TokenKind::kNumber) fail(t, expected());
        return number(t, false);
      case ValueType::kFloat:
        if (t.kind != TokenKind::kNumber) fail(t, expected());
        return number(t, true);
      case ValueType::kBool:
        if (t.text == "true") return Arg(true);
        if (t.text == "false") return Arg(false);
        fail(t, expected());
      case ValueType::kString:
      case ValueType::kEnum:
        if (t.kind == TokenKind::kString) return string(t, slot);
        if (t.kind != TokenKind::kWord || !is_bare_word(t.text)) fail(t, expected());
        return string(t, slot);
      case ValueType::kSplitFactor:
        if (t.kind == TokenKind::kNumber) return number(t, false);
        if (t.text == "None" && t.kind == TokenKind::kWord) return Arg(schedule::None{});
        if (rv_word) return Arg(variable(t, type));
        fail(t, expected());
      case ValueType::kOptionalNumber:
        if (t.kind == TokenKind::kNumber) return number(t, true);
        if (t.text == "None" && t.kind == TokenKind::kWord) return Arg(schedule::None{});
        fail(t, expected());
      case ValueType::kAnnValue:
        if (t.kind == TokenKind::kNumber) return number(t, true);
        if (t.kind == TokenKind::kWord && t.text == "true") return Arg(true);
        if (t.kind == TokenKind::kWord && t.text == "false") return Arg(false);
        if (rv_word) return Arg(variable(t, type));
        if (t.kind == TokenKind::kString || (t.kind == TokenKind::kWord && is_bare_word(t.text))) return string(t, slot);
        fail(t, expected());
    }
    fail(t, expected());
  }

  void check_no_trailing_default(const std::vector<std::vector<Arg>>& values, int last_written) const {
    if (last_written < 0) return;
    const SlotSchema& slot = schema_->slots[last_written];
    bool is_default = false;
    switch (slot.default_kind) {
      case DefaultKind::kRequired:
      case DefaultKind::kEmpty: return;  // a written rest is never empty
      case DefaultKind::kValue: is_default = values[last_written][0] == slot.default_value; break;
      case DefaultKind::kUniformProbs:
        is_default = values[last_written] == default_values(slot, values, static_cast<size_t>(last_written));
        break;
    }
    if (is_default) {
      fail_at(written_at_[static_cast<size_t>(last_written)],
              fmt::format("non-canonical: {} is its default here; omit it", slot.name));
    }
  }

  Arg parse_decision() {
    const Token& eq = tokens_[pos_++];
    if (schema_->decision == DecisionShape::kNone) fail(eq, fmt::format("{} takes no decision", schema_->mnemonic));
    std::vector<Arg> ints;
    while (pos_ < tokens_.size()) {
      const Token& t = tokens_[pos_];
      if (t.kind != TokenKind::kNumber) fail(t, fmt::format("expected an integer decision, got '{}'", t.text));
      ints.push_back(number(t, false));
      ++pos_;
    }
    if (schema_->decision == DecisionShape::kIntList) return Arg(Arg::List(ints.begin(), ints.end()));
    if (ints.size() != 1) {
      fail_at(ints.empty() ? end_column() : tokens_[tokens_.size() - ints.size() + 1].column,
              fmt::format("{} takes one integer as its decision", schema_->mnemonic));
    }
    return ints[0];
  }

  Instruction build(const std::vector<std::vector<Arg>>& values) const {
    Instruction inst;
    inst.kind = schema_->kind;
    int64_t outputs = 0;
    int count_column = 0;
    for (size_t s = 0; s < schema_->slots.size(); ++s) {
      const SlotSchema& slot = schema_->slots[s];
      std::vector<Arg>& target = slot.source == SlotSource::kAttr ? inst.attrs : inst.inputs;
      switch (slot.source) {
        case SlotSource::kOutputCount: break;
        case SlotSource::kInputsFrom: target.insert(target.end(), values[s].begin(), values[s].end()); break;
        case SlotSource::kInput:
        case SlotSource::kAttr:
          target.push_back(slot.shape == SlotShape::kSingle ? values[s].at(0) : Arg(Arg::List(values[s])));
          break;
      }
    }
    const OutputSchema& out = schema_->outputs;
    switch (out.rule) {
      case OutputRule::kFixed: outputs = out.fixed_count; break;
      case OutputRule::kListLength: outputs = static_cast<int64_t>(values[out.slot].size()); break;
      case OutputRule::kFromSlot:
      case OutputRule::kWritten:
        outputs = *values[out.slot].at(0).as<int64_t>();
        count_column = static_cast<size_t>(out.slot) < written_at_.size() ? written_at_[out.slot] : end_column();
        break;
    }
    if (outputs < 0 || outputs > kMaxOutputs) {
      fail_at(count_column, fmt::format("{} = {} outputs: must be between 0 and {}", schema_->slots[out.slot].name,
                                        outputs, kMaxOutputs));
    }
    int64_t id = next_id_;
    for (int64_t k = 0; k < outputs; ++k) inst.outputs.push_back(RandomVar{out.type, id++});
    return inst;
  }

  int line_number_;
  std::string_view line_;
  std::vector<Token> tokens_;
  const int64_t (&counts_)[3];
  const std::vector<RandomVar> (&vars_)[3];
  int64_t next_id_;
  const KindSchema* schema_ = nullptr;
  size_t pos_ = 0;
  std::vector<int> written_at_;  // per slot parsed so far: the column of its last token
};

}  // namespace

LineDecoder::Decoded LineDecoder::parse(std::string_view line) const {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const int line_number = lines_ + 1;
  std::vector<Token> tokens = detail::lex_line(line, line_number);
  if (tokens.empty()) return {};
  LineParser parser(line_number, line, std::move(tokens), counts_, vars_, next_id_);
  auto [inst, decision] = parser.parse();
  return Decoded{std::move(inst), std::move(decision)};
}

void LineDecoder::check(std::string_view line) const { parse(line); }

std::optional<size_t> LineDecoder::feed(std::string_view line) {
  Decoded d = parse(line);
  ++lines_;
  if (!d.inst) return std::nullopt;
  for (const RandomVar& rv : d.inst->outputs) {
    const size_t k = static_cast<size_t>(rv.type);
    vars_[k].push_back(rv);
    ++counts_[k];
    next_id_ = std::max(next_id_, rv.id + 1);
  }
  trace_.append(std::move(*d.inst), std::move(d.decision));
  return trace_.size() - 1;
}

schedule::Trace decode(std::string_view script) {
  LineDecoder decoder;
  size_t start = 0;
  while (start < script.size()) {
    size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    decoder.feed(script.substr(start, end - start));
    start = end + 1;
  }
  return std::move(decoder).take_trace();
}

bool is_canonical(std::string_view script) {
  try {
    return encode(decode(script)) == script;
  } catch (const UserError&) {
    return false;
  }
}

}  // namespace dragon::script
