// IndexMap's lambda text (tokenizer, recursive-descent parser, printer with Python
// precedence), its application to IR indices and its integer evaluation.
#include "dragon/schedule/index_map.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

constexpr std::string_view kSource = "<index_map>";

struct Token {
  enum class Kind { kIdent, kInt, kPunct, kEnd } kind;
  std::string text;
  int column;  // 1-based
};

[[noreturn]] void fail(int column, std::string_view message) { throw UserError::at(kSource, 1, column, message); }

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const int column = static_cast<int>(i) + 1;
    if (c == ' ' || c == '\t') {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      tokens.push_back({Token::Kind::kIdent, std::string(text.substr(i, j - i)), column});
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      tokens.push_back({Token::Kind::kInt, std::string(text.substr(i, j - i)), column});
      i = j;
    } else if (text.substr(i, 2) == "//") {
      tokens.push_back({Token::Kind::kPunct, "//", column});
      i += 2;
    } else if (std::string_view("+-*%(),:[]").find(c) != std::string_view::npos) {
      tokens.push_back({Token::Kind::kPunct, std::string(1, c), column});
      ++i;
    } else {
      fail(column, fmt::format("unexpected character '{}'", c));
    }
  }
  tokens.push_back({Token::Kind::kEnd, "", static_cast<int>(text.size()) + 1});
  return tokens;
}

bool uses_var(const Expr& e) {
  switch (e.kind()) {
    case NodeKind::Var: return true;
    case NodeKind::IntImm: return false;
#define DRAGON_BINARY_NODE(Name)                                  \
  case NodeKind::Name: {                                          \
    const auto* n = static_cast<const Name##Node*>(e.get());      \
    return uses_var(n->a) || uses_var(n->b);                      \
  }
#include "dragon/ir/nodes.def"
    default: DRAGON_UNREACHABLE("{} in an index map", node_kind_name(e.kind()));
  }
}

// Floor division and modulo of integers (Python's // and %), b > 0.
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

// The value of `e` with each parameter at its coordinate of `point`.
int64_t evaluate_expr(const Expr& e, const std::vector<Var>& params, const std::vector<int64_t>& point) {
  switch (e.kind()) {
    case NodeKind::IntImm: return static_cast<const IntImmNode*>(e.get())->value;
    case NodeKind::Var:
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].get() == e.get()) return point[i];
      }
      DRAGON_UNREACHABLE("variable '{}' is not a parameter of the index map", e.as<VarNode>()->name);
    case NodeKind::Add: {
      const auto* n = static_cast<const AddNode*>(e.get());
      return evaluate_expr(n->a, params, point) + evaluate_expr(n->b, params, point);
    }
    case NodeKind::Sub: {
      const auto* n = static_cast<const SubNode*>(e.get());
      return evaluate_expr(n->a, params, point) - evaluate_expr(n->b, params, point);
    }
    case NodeKind::Mul: {
      const auto* n = static_cast<const MulNode*>(e.get());
      return evaluate_expr(n->a, params, point) * evaluate_expr(n->b, params, point);
    }
    case NodeKind::FloorDiv: {
      const auto* n = static_cast<const FloorDivNode*>(e.get());
      return floor_div(evaluate_expr(n->a, params, point), evaluate_expr(n->b, params, point));
    }
    case NodeKind::FloorMod: {
      const auto* n = static_cast<const FloorModNode*>(e.get());
      return floor_mod(evaluate_expr(n->a, params, point), evaluate_expr(n->b, params, point));
    }
    default: DRAGON_UNREACHABLE("{} in an index map", node_kind_name(e.kind()));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : tokens_(tokenize(text)) {}

  void parse(std::vector<Var>& params, std::vector<Expr>& results) {
    const Token& first = next();
    if (first.kind != Token::Kind::kIdent || first.text != "lambda") fail(first.column, "expected 'lambda'");
    while (!peek(":")) {
      const Token& name = next();
      if (name.kind != Token::Kind::kIdent || name.text == "lambda") fail(name.column, "expected a parameter name");
      for (const Var& p : params) {
        if (p.name() == name.text) fail(name.column, fmt::format("parameter '{}' is given twice", name.text));
      }
      params.emplace_back(name.text, DataType::i64());
      if (!accept(",") && !peek(":")) fail(current().column, "expected ',' or ':' after a parameter");
    }
    next();  // ':'
    params_ = &params;
    results = parse_body();
    if (current().kind != Token::Kind::kEnd) fail(current().column, fmt::format("unexpected '{}'", current().text));
  }

 private:
  // "(e0, e1)" / "[e0, e1]" as the whole body, else a bare list "e0, e1".
  std::vector<Expr> parse_body() {
    for (auto [open, close] : {std::pair{"(", ")"}, std::pair{"[", "]"}}) {
      if (!peek(open)) continue;
      const size_t saved = pos_;
      next();
      std::vector<Expr> list = parse_list(close);
      if (accept(close) && current().kind == Token::Kind::kEnd) return list;
      pos_ = saved;  // "(i + 1) // 2, j": the parenthesis opens an expression
    }
    return parse_list("");
  }

  std::vector<Expr> parse_list(std::string_view close) {
    std::vector<Expr> list;
    while (!(close.empty() ? current().kind == Token::Kind::kEnd : peek(close))) {
      list.push_back(parse_sum());
      if (!accept(",")) break;
    }
    return list;
  }

  Expr parse_sum() {
    Expr e = parse_product();
    while (peek("+") || peek("-")) {
      const bool add = next().text == "+";
      Expr rhs = parse_product();
      e = fold(add ? AddNode::make(e, rhs) : SubNode::make(e, rhs));
    }
    return e;
  }

  Expr parse_product() {
    Expr e = parse_unary();
    while (peek("*") || peek("//") || peek("%")) {
      const Token op = next();
      Expr rhs = parse_unary();
      if (op.text == "*") {
        if (uses_var(e) && uses_var(rhs)) fail(op.column, "a product of two indices is not affine");
        e = fold(MulNode::make(e, rhs));
        continue;
      }
      const std::optional<int64_t> divisor = as_const_int(rhs);
      if (!divisor || *divisor <= 0) fail(op.column, fmt::format("'{}' needs a positive constant divisor", op.text));
      e = fold(op.text == "//" ? FloorDivNode::make(e, rhs) : FloorModNode::make(e, rhs));
    }
    return e;
  }

  Expr parse_unary() {
    if (accept("-")) {
      Expr e = parse_unary();
      if (std::optional<int64_t> c = as_const_int(e)) return make_const(DataType::i64(), static_cast<double>(-*c));
      return MulNode::make(make_const(DataType::i64(), -1), e);
    }
    const Token& t = next();
    if (t.kind == Token::Kind::kInt) {
      if (t.text.size() > 18) fail(t.column, "integer literal too large");
      return IntImmNode::make(DataType::i64(), std::stoll(t.text));
    }
    if (t.kind == Token::Kind::kIdent) {
      for (const Var& p : *params_) {
        if (p.name() == t.text) return p;
      }
      fail(t.column, fmt::format("'{}' is not a parameter of the lambda", t.text));
    }
    if (t.text == "(") {
      Expr e = parse_sum();
      if (!accept(")")) fail(current().column, "expected ')'");
      return e;
    }
    fail(t.column, t.kind == Token::Kind::kEnd ? "unexpected end of text" : fmt::format("unexpected '{}'", t.text));
  }

  // Constant operands fold at once, so "i // (4 * 4)" has the divisor 16.
  static Expr fold(const Expr& e) {
    if (uses_var(e)) return e;
    return IntImmNode::make(DataType::i64(), evaluate_expr(e, {}, {}));
  }

 private:
  const Token& current() const { return tokens_[pos_]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (t.kind != Token::Kind::kEnd) ++pos_;
    return t;
  }
  bool peek(std::string_view punct) const {
    return current().kind == Token::Kind::kPunct && current().text == punct;
  }
  bool accept(std::string_view punct) {
    if (!peek(punct)) return false;
    ++pos_;
    return true;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  const std::vector<Var>* params_ = nullptr;
};

// Python precedence: sums 1, products 2, atoms 3; operators associate to the left, so a
// right operand of the same level needs parentheses ("i - (j + 1)", "i // (j * 2)" never
// arises: divisors are constants).
int precedence(const Expr& e) {
  switch (e.kind()) {
    case NodeKind::Add:
    case NodeKind::Sub: return 1;
    case NodeKind::Mul:
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod: return 2;
    default: return 3;
  }
}

// The operator of an index map's binary node.
std::string_view spelling(NodeKind kind) {
  switch (kind) {
    case NodeKind::Add: return "+";
    case NodeKind::Sub: return "-";
    case NodeKind::Mul: return "*";
    case NodeKind::FloorDiv: return "//";
    case NodeKind::FloorMod: return "%";
    default: DRAGON_UNREACHABLE("{} in an index map", node_kind_name(kind));
  }
}

std::pair<Expr, Expr> operands(const Expr& e) {
  switch (e.kind()) {
#define DRAGON_BINARY_NODE(Name)                             \
  case NodeKind::Name: {                                     \
    const auto* n = static_cast<const Name##Node*>(e.get()); \
    return {n->a, n->b};                                     \
  }
#include "dragon/ir/nodes.def"
    default: DRAGON_UNREACHABLE("{} is not a binary node", node_kind_name(e.kind()));
  }
}

std::string print(const Expr& e, int parent, bool right) {
  if (const auto* imm = e.as<IntImmNode>()) return std::to_string(imm->value);
  if (const auto* var = e.as<VarNode>()) return var->name;
  const int p = precedence(e);
  const auto [a, b] = operands(e);
  std::string text = fmt::format("{} {} {}", print(a, p, false), spelling(e.kind()), print(b, p, true));
  return p < parent || (p == parent && right) ? "(" + text + ")" : text;
}

// `e` (over `params`) rebuilt with `args` for the parameters, in type `type`.
Expr rebuild(const Expr& e, const std::vector<Var>& params, const std::vector<Expr>& args, DataType type) {
  switch (e.kind()) {
    case NodeKind::IntImm: return make_const(type, static_cast<double>(static_cast<const IntImmNode*>(e.get())->value));
    case NodeKind::Var:
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].get() == e.get()) return args[i];
      }
      DRAGON_UNREACHABLE("variable is not a parameter of the index map");
#define DRAGON_BINARY_NODE(Name)                                                          \
  case NodeKind::Name: {                                                                  \
    const auto* n = static_cast<const Name##Node*>(e.get());                              \
    return Name##Node::make(rebuild(n->a, params, args, type), rebuild(n->b, params, args, type)); \
  }
#include "dragon/ir/nodes.def"
    default: DRAGON_UNREACHABLE("{} in an index map", node_kind_name(e.kind()));
  }
}

// `e` as constant + sum of coefficient * parameter (coefficients by parameter index), or
// false when it uses // or %.
bool linearize(const Expr& e, const std::vector<Var>& params, int64_t scale, std::vector<int64_t>& coefficients,
               int64_t& constant) {
  switch (e.kind()) {
    case NodeKind::IntImm: constant += scale * static_cast<const IntImmNode*>(e.get())->value; return true;
    case NodeKind::Var:
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].get() == e.get()) coefficients[i] += scale;
      }
      return true;
    case NodeKind::Add: {
      const auto* n = static_cast<const AddNode*>(e.get());
      return linearize(n->a, params, scale, coefficients, constant) &&
             linearize(n->b, params, scale, coefficients, constant);
    }
    case NodeKind::Sub: {
      const auto* n = static_cast<const SubNode*>(e.get());
      return linearize(n->a, params, scale, coefficients, constant) &&
             linearize(n->b, params, -scale, coefficients, constant);
    }
    case NodeKind::Mul: {
      // The parser keeps one side of a product constant.
      const auto* n = static_cast<const MulNode*>(e.get());
      if (!uses_var(n->a)) return linearize(n->b, params, scale * evaluate_expr(n->a, {}, {}), coefficients, constant);
      return linearize(n->a, params, scale * evaluate_expr(n->b, {}, {}), coefficients, constant);
    }
    default: return false;
  }
}

}  // namespace

IndexMap::Fusion IndexMap::as_fusion(const std::vector<int64_t>& extents, const std::vector<std::string>& names,
                                     DataType type) const {
  DRAGON_CHECK(extents.size() == params_.size(), "an index map of {} parameters over {} extents", params_.size(),
               extents.size());
  Fusion out;
  auto fail = [&](std::string why) {
    Fusion bad;
    bad.problem = std::move(why);
    return bad;
  };
  std::vector<int> used_by(params_.size(), -1);
  std::vector<std::vector<int64_t>> coefficients;
  for (size_t r = 0; r < results_.size(); ++r) {
    std::vector<int64_t> c(params_.size(), 0);
    int64_t constant = 0;
    const std::string shown = print(results_[r], 0, false);
    if (!linearize(results_[r], params_, 1, c, constant)) {
      return fail(fmt::format("result {} ({}) uses // or %, not a sum of parameters times constants", r, shown));
    }
    if (constant != 0) {
      return fail(fmt::format("result {} ({}) adds the constant {}: the image does not start at 0", r, shown, constant));
    }
    for (size_t p = 0; p < params_.size(); ++p) {
      if (c[p] == 0 || extents[p] == 1) continue;
      if (c[p] < 0) {
        return fail(fmt::format("result {} ({}) scales '{}' by {}: negative indices", r, shown, params_[p].name(), c[p]));
      }
      if (used_by[p] >= 0) {
        return fail(fmt::format("'{}' is used by results {} and {}: not a bijection", params_[p].name(), used_by[p], r));
      }
      used_by[p] = static_cast<int>(r);
    }
    coefficients.push_back(std::move(c));
  }
  for (size_t p = 0; p < params_.size(); ++p) {
    if (extents[p] > 1 && used_by[p] < 0) {
      return fail(fmt::format("'{}' (extent {}) is used by no result: not a bijection", params_[p].name(), extents[p]));
    }
  }
  out.inverse.assign(params_.size(), Expr());
  for (size_t r = 0; r < results_.size(); ++r) {
    std::vector<size_t> fused;
    for (size_t p = 0; p < params_.size(); ++p) {
      if (used_by[p] == static_cast<int>(r)) fused.push_back(p);
    }
    std::vector<size_t> by_weight = fused;
    std::stable_sort(by_weight.begin(), by_weight.end(),
                     [&](size_t a, size_t b) { return coefficients[r][a] < coefficients[r][b]; });
    int64_t expected = 1;
    for (size_t p : by_weight) {
      if (coefficients[r][p] != expected) {
        return fail(fmt::format(
            "result {} ({}) scales '{}' by {} where the extents of the parameters below it make {}: {}", r,
            print(results_[r], 0, false), params_[p].name(), coefficients[r][p], expected,
            coefficients[r][p] < expected ? "two points map to one index, not a bijection"
                                          : "indices are skipped, the image is not a box"));
      }
      expected *= extents[p];
    }
    out.shape.push_back(expected);
    const std::string name = r < names.size() ? names[r] : fmt::format("r{}", r);
    Var u(name, type);
    out.new_params.push_back(u);
    for (size_t k = 0; k < by_weight.size(); ++k) {
      const size_t p = by_weight[k];
      const int64_t c = coefficients[r][p];
      Expr x = c == 1 ? Expr(u) : FloorDivNode::make(u, make_const(type, static_cast<double>(c)));
      if (k + 1 < by_weight.size()) x = FloorModNode::make(x, make_const(type, static_cast<double>(extents[p])));
      out.inverse[p] = x;
    }
    out.sources.push_back(std::move(fused));
    std::vector<size_t> mentioned;
    for (size_t p = 0; p < params_.size(); ++p) {
      if (coefficients[r][p] != 0) mentioned.push_back(p);
    }
    out.mentions.push_back(std::move(mentioned));
  }
  for (size_t p = 0; p < params_.size(); ++p) {
    if (!out.inverse[p].defined()) out.inverse[p] = make_zero(type);
  }
  return out;
}

IndexMap IndexMap::parse(std::string_view text) {
  IndexMap map;
  Parser(text).parse(map.params_, map.results_);
  return map;
}

IndexMap IndexMap::fusing(const std::vector<std::string>& names, const std::vector<int64_t>& extents,
                          const std::vector<std::vector<size_t>>& groups) {
  DRAGON_CHECK(names.size() == extents.size(), "{} names for {} extents", names.size(), extents.size());
  std::string text = "lambda";
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? " " : ", ") + names[i];
  text += ": (";
  for (size_t g = 0; g < groups.size(); ++g) {
    std::string term;
    int64_t stride = 1;
    for (size_t k = groups[g].size(); k-- > 0;) {
      const size_t p = groups[g][k];
      DRAGON_CHECK(p < names.size(), "group {} names parameter {} of {}", g, p, names.size());
      std::string part = stride == 1 ? names[p] : fmt::format("{} * {}", names[p], stride);
      term = term.empty() ? part : part + " + " + term;
      stride *= extents[p];
    }
    text += (g == 0 ? "" : ", ") + (term.empty() ? std::string("0") : term);
  }
  text += groups.size() == 1 ? ",)" : ")";
  return parse(text);
}

std::string IndexMap::to_string() const {
  std::string text = "lambda";
  for (size_t i = 0; i < params_.size(); ++i) text += (i == 0 ? " " : ", ") + params_[i].name();
  text += ": (";
  for (size_t i = 0; i < results_.size(); ++i) text += (i == 0 ? "" : ", ") + print(results_[i], 0, false);
  // A one-element tuple keeps its comma, as Python writes it.
  text += results_.size() == 1 ? ",)" : ")";
  return text;
}

std::vector<Expr> IndexMap::apply(const std::vector<Expr>& indices) const {
  DRAGON_CHECK(indices.size() == params_.size(), "an index map of {} parameters applied to {} indices", params_.size(),
               indices.size());
  DataType type = DataType::i32();
  for (const Expr& i : indices) {
    if (i.dtype().bits() > type.bits()) type = i.dtype();
  }
  std::vector<Expr> args;
  for (const Expr& i : indices) args.push_back(i.dtype() == type ? i : cast(type, i));
  std::vector<Expr> out;
  for (const Expr& r : results_) out.push_back(rebuild(r, params_, args, type));
  return out;
}

std::vector<int64_t> IndexMap::evaluate(const std::vector<int64_t>& point) const {
  DRAGON_CHECK(point.size() == params_.size(), "an index map of {} parameters evaluated at {} values",
               params_.size(), point.size());
  std::vector<int64_t> out;
  for (const Expr& r : results_) out.push_back(evaluate_expr(r, params_, point));
  return out;
}

}  // namespace dragon::schedule
