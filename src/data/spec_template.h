// Op spec templates of model configuration files: an op spec whose values may be
// "{expression}" over named variables, e.g.
//   matmul_bias_act:m={batch*seq},n={3*hidden},k={hidden},activation=none,dtype={dtype}
// Expressions are integers with + - * / % (floor division) and parentheses over integer
// variables; "{name}" alone also substitutes a word variable (dtype, activation). Not a
// spec parser: the expanded text goes to ops::OpRegistry::parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace dragon::data {

// A variable's value: a number (batch, hidden) or a word (f16, gelu).
using TemplateValue = std::variant<int64_t, std::string>;
// "768" -> 768, anything else stays a word.
TemplateValue parse_template_value(const std::string& text);
std::string format_template_value(const TemplateValue& value);

class SpecTemplate {
 public:
  // Compiles `text`; a variable is the index of its name in `variables`. Throws UserError
  // (without a location: the caller adds FILE:LINE) for bad syntax or an unknown variable.
  static SpecTemplate parse(std::string_view text, const std::vector<std::string>& variables);

  // The spec for one binding (values[i] is variables[i]). Throws UserError for a word in
  // arithmetic or a division by zero.
  std::string expand(const std::vector<TemplateValue>& values) const;

  // The variable indices the template reads, sorted, each once.
  const std::vector<int>& used_variables() const { return used_; }

 private:
  struct Node {
    enum class Kind : uint8_t { kConst, kVar, kAdd, kSub, kMul, kDiv, kMod } kind = Kind::kConst;
    int64_t value = 0;  // kConst
    int var = -1;       // kVar
    int lhs = -1, rhs = -1;
  };
  struct Segment {
    std::string literal;  // text before the expression
    int root = -1;        // -1: no expression (the tail)
  };
  class Parser;

  int64_t eval_int(int node, const std::vector<TemplateValue>& values) const;

  std::vector<std::string> variables_;
  std::vector<Node> nodes_;
  std::vector<Segment> segments_;
  std::vector<int> used_;
};

}  // namespace dragon::data
