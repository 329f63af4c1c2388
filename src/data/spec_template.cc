// Compiling and expanding op spec templates (spec_template.h).
#include "spec_template.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "dragon/support/error.h"

namespace dragon::data {

TemplateValue parse_template_value(const std::string& text) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && ptr == text.data() + text.size() && !text.empty()) return value;
  return text;
}

std::string format_template_value(const TemplateValue& value) {
  if (const int64_t* number = std::get_if<int64_t>(&value)) return std::to_string(*number);
  return std::get<std::string>(value);
}

// Recursive descent over one "{...}" expression:
//   sum := product (('+' | '-') product)*
//   product := atom (('*' | '/' | '%') atom)*
//   atom := INTEGER | NAME | '(' sum ')'
class SpecTemplate::Parser {
 public:
  Parser(std::string_view text, SpecTemplate& out) : text_(text), out_(out) {}

  int parse_all() {
    const int root = sum();
    skip_space();
    if (pos_ != text_.size()) fail(fmt::format("unexpected '{}'", text_.substr(pos_)));
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw UserError(fmt::format("in '{{{}}}': {}", text_, why));
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  int add(Node node) {
    out_.nodes_.push_back(node);
    return static_cast<int>(out_.nodes_.size()) - 1;
  }
  int sum() {
    int lhs = product();
    while (true) {
      skip_space();
      if (pos_ >= text_.size() || (text_[pos_] != '+' && text_[pos_] != '-')) return lhs;
      const Node::Kind kind = text_[pos_++] == '+' ? Node::Kind::kAdd : Node::Kind::kSub;
      const int rhs = product();
      lhs = add(Node{kind, 0, -1, lhs, rhs});
    }
  }
  int product() {
    int lhs = atom();
    while (true) {
      skip_space();
      if (pos_ >= text_.size()) return lhs;
      const char c = text_[pos_];
      Node::Kind kind;
      if (c == '*') kind = Node::Kind::kMul;
      else if (c == '/') kind = Node::Kind::kDiv;
      else if (c == '%') kind = Node::Kind::kMod;
      else return lhs;
      ++pos_;
      const int rhs = atom();
      lhs = add(Node{kind, 0, -1, lhs, rhs});
    }
  }
  int atom() {
    skip_space();
    if (pos_ >= text_.size()) fail("expected a number, a variable or '('");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const int inner = sum();
      skip_space();
      if (pos_ >= text_.size() || text_[pos_] != ')') fail("missing ')'");
      ++pos_;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), value);
      if (ec != std::errc()) fail("a number out of range");
      pos_ = static_cast<size_t>(ptr - text_.data());
      return add(Node{Node::Kind::kConst, value, -1, -1, -1});
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
      const std::string name(text_.substr(start, pos_ - start));
      const auto& vars = out_.variables_;
      const auto it = std::find(vars.begin(), vars.end(), name);
      if (it == vars.end()) {
        std::string known;
        for (const std::string& v : vars) known += (known.empty() ? "" : ", ") + v;
        fail(fmt::format("unknown variable '{}' (variables: {})", name, known));
      }
      return add(Node{Node::Kind::kVar, 0, static_cast<int>(it - vars.begin()), -1, -1});
    }
    fail(fmt::format("unexpected '{}'", c));
  }

  std::string_view text_;
  SpecTemplate& out_;
  size_t pos_ = 0;
};

SpecTemplate SpecTemplate::parse(std::string_view text, const std::vector<std::string>& variables) {
  SpecTemplate t;
  t.variables_ = variables;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find('{', pos);
    if (open == std::string_view::npos) {
      const std::string_view tail = text.substr(pos);
      if (tail.find('}') != std::string_view::npos) throw UserError(fmt::format("a '}}' without '{{' in '{}'", text));
      t.segments_.push_back(Segment{std::string(tail), -1});
      break;
    }
    const size_t close = text.find('}', open);
    if (close == std::string_view::npos) throw UserError(fmt::format("a '{{' without '}}' in '{}'", text));
    const std::string_view literal = text.substr(pos, open - pos);
    if (literal.find('}') != std::string_view::npos) throw UserError(fmt::format("a '}}' without '{{' in '{}'", text));
    Parser parser(text.substr(open + 1, close - open - 1), t);
    t.segments_.push_back(Segment{std::string(literal), parser.parse_all()});
    pos = close + 1;
  }
  for (const Node& n : t.nodes_) {
    if (n.kind == Node::Kind::kVar) t.used_.push_back(n.var);
  }
  std::sort(t.used_.begin(), t.used_.end());
  t.used_.erase(std::unique(t.used_.begin(), t.used_.end()), t.used_.end());
  return t;
}

int64_t SpecTemplate::eval_int(int index, const std::vector<TemplateValue>& values) const {
  const Node& n = nodes_[index];
  switch (n.kind) {
    case Node::Kind::kConst: return n.value;
    case Node::Kind::kVar: {
      const int64_t* number = std::get_if<int64_t>(&values[n.var]);
      if (number == nullptr) {
        throw UserError(fmt::format("variable '{}' is the word '{}', not a number", variables_[n.var],
                                    std::get<std::string>(values[n.var])));
      }
      return *number;
    }
    default: break;
  }
  const int64_t a = eval_int(n.lhs, values);
  const int64_t b = eval_int(n.rhs, values);
  switch (n.kind) {
    case Node::Kind::kAdd: return a + b;
    case Node::Kind::kSub: return a - b;
    case Node::Kind::kMul: return a * b;
    case Node::Kind::kDiv:
    case Node::Kind::kMod: {
      if (b == 0) throw UserError("division by zero");
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;  // floor, as Python's //
      return n.kind == Node::Kind::kDiv ? q : a - q * b;
    }
    default: return 0;
  }
}

std::string SpecTemplate::expand(const std::vector<TemplateValue>& values) const {
  std::string out;
  for (const Segment& s : segments_) {
    out += s.literal;
    if (s.root < 0) continue;
    const Node& root = nodes_[s.root];
    out += root.kind == Node::Kind::kVar ? format_template_value(values[root.var])
                                         : std::to_string(eval_int(s.root, values));
  }
  return out;
}

}  // namespace dragon::data
