// The IR text parser's expressions: precedence climbing over the binary operators,
// literals with their types, calls, casts, loads and variables, all type-checked before
// any node is made.
#include <charconv>
#include <cmath>
#include <limits>
#include <tuple>

#include "../text_format.h"
#include "dragon/ir/op.h"
#include "dragon/support/error.h"
#include "parser.h"

namespace dragon::ir::parser {
namespace {

// Binary operators by precedence level, lowest first; all left-associative.
constexpr int kLevels = 6;
bool is_level_op(int level, std::string_view op) {
  switch (level) {
    case 1: return op == "||";
    case 2: return op == "&&";
    case 3: return op == "==" || op == "!=";
    case 4: return op == "<" || op == "<=" || op == ">" || op == ">=";
    case 5: return op == "+" || op == "-";
    case 6: return op == "*" || op == "/" || op == "//" || op == "%";
    default: return false;
  }
}

struct IntrinsicInfo {
  Intrinsic op;
  std::string_view spelling;
  int arity;
  char kind;  // 'F' float -> float, 'P' float -> bool, 'A' int or float -> same, 'E' effect
};

constexpr IntrinsicInfo kIntrinsics[] = {
#define FLOAT 'F'
#define PRED 'P'
#define ANY 'A'
#define EFFECT 'E'
#define DRAGON_INTRINSIC(Name, spelling, arity, kind) {Intrinsic::Name, spelling, arity, kind},
#include "dragon/ir/intrinsics.def"
#undef FLOAT
#undef PRED
#undef ANY
#undef EFFECT
};

// Splits "1e-05f16" into its digits "1e-05" and suffix "f16".
std::pair<std::string_view, std::string_view> split_number(std::string_view text) {
  size_t i = 0;
  auto digit = [&](size_t k) { return k < text.size() && text[k] >= '0' && text[k] <= '9'; };
  while (digit(i)) ++i;
  if (i < text.size() && text[i] == '.' && digit(i + 1)) {
    ++i;
    while (digit(i)) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t k = i + 1;
    if (k < text.size() && (text[k] == '+' || text[k] == '-')) ++k;
    if (digit(k)) {
      i = k;
      while (digit(i)) ++i;
    }
  }
  return {text.substr(0, i), text.substr(i)};
}

}  // namespace

void Parser::require_int(const Token& at, const Expr& e, std::string_view what) const {
  if (!e.dtype().is_int() || !e.dtype().is_scalar()) {
    fail(at, fmt::format("{} must be an integer, got {}", what, to_string(e.dtype())));
  }
}

Expr Parser::parse_expr() { return parse_binary(1); }

Expr Parser::parse_binary(int level) {
  if (level > kLevels) return parse_unary();
  Expr lhs = parse_binary(level + 1);
  while (peek().kind == TokenKind::kPunct && is_level_op(level, peek().text)) {
    const Token& op = next();
    Expr rhs = parse_binary(level + 1);
    lhs = make_binary(op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

Expr Parser::make_binary(const Token& op, Expr a, Expr b) {
  const std::string& o = op.text;
  if (a.dtype() != b.dtype()) {
    fail(op, fmt::format("type mismatch: {} {} {}", to_string(a.dtype()), o, to_string(b.dtype())));
  }
  DataType type = a.dtype();
  if (o == "&&" || o == "||") {
    if (!type.is_bool()) fail(op, fmt::format("operands of {} must be bool, got {}", o, to_string(type)));
    return o == "&&" ? AndNode::make(a, b) : OrNode::make(a, b);
  }
  if (o == "==") return EQNode::make(a, b);
  if (o == "!=") return NENode::make(a, b);
  if (o == "<") return LTNode::make(a, b);
  if (o == "<=") return LENode::make(a, b);
  if (o == ">") return GTNode::make(a, b);
  if (o == ">=") return GENode::make(a, b);
  if (o == "//" || o == "%") {
    if (!type.is_int()) fail(op, fmt::format("operands of {} must be integers, got {}", o, to_string(type)));
    return o == "//" ? FloorDivNode::make(a, b) : FloorModNode::make(a, b);
  }
  if (type.is_bool()) fail(op, fmt::format("{} does not apply to bool", o));
  if (o == "+") return AddNode::make(a, b);
  if (o == "-") return SubNode::make(a, b);
  if (o == "*") return MulNode::make(a, b);
  return DivNode::make(a, b);
}

Expr Parser::parse_unary() {
  const Token& t = peek();
  DepthGuard guard(*this, t);
  if (at("!")) {
    next();
    const Token& operand_token = peek();
    Expr a = parse_unary();
    if (!a.dtype().is_bool())
      fail(operand_token, fmt::format("operand of ! must be bool, got {}", to_string(a.dtype())));
    return NotNode::make(std::move(a));
  }
  return parse_primary();
}

Expr Parser::parse_primary() {
  const Token& t = peek();
  if (at("(")) {
    next();
    Expr e = parse_expr();
    expect(")", "to close the parenthesis");
    return e;
  }
  if (at("-")) {
    // Only literals are negated in the text (0 - x is a subtraction).
    const Token& minus = next();
    const Token& n = peek();
    bool adjacent = n.line == minus.end_line && n.column == minus.end_column;
    bool literal = n.kind == TokenKind::kNumber ||
                   (n.kind == TokenKind::kIdent && n.text.size() > 3 && n.text.substr(0, 3) == "inf" &&
                    parse_dtype(std::string_view(n.text).substr(3)));
    if (!adjacent || !literal) fail(minus, "'-' in front of an operand must be part of a number literal, as in -3");
    next();
    return parse_number(n, &minus);
  }
  if (t.kind == TokenKind::kNumber) return parse_number(next(), nullptr);
  if (t.kind != TokenKind::kIdent) fail(t, "expected an expression, found " + describe(t));
  if (t.text == "true" || t.text == "false") {
    next();
    return make_bool(t.text == "true");
  }
  if (t.text.size() > 3 && (t.text.substr(0, 3) == "inf" || t.text.substr(0, 3) == "nan") &&
      parse_dtype(std::string_view(t.text).substr(3))) {
    return parse_number(next(), nullptr);
  }
  if (t.text == "inf" || t.text == "nan")
    fail(t, fmt::format("{} needs a float type suffix, as in {}f32", t.text, t.text));
  if (at("(", 1)) return parse_call(next());
  if (at("[", 1)) {
    const Token& name = next();
    Buffer buffer = find_buffer(name);
    std::vector<Expr> indices = parse_indices(buffer, name);
    return BufferLoadNode::make(buffer, std::move(indices));
  }
  Var var = find_var(t);
  next();
  return var;
}

Expr Parser::parse_number(const Token& literal, const Token* minus) {
  bool negative = minus != nullptr;
  const Token& token = negative ? *minus : literal;
  std::string_view text = literal.text;
  std::string_view digits, suffix;
  bool special = literal.kind == TokenKind::kIdent;  // inff32, nanf32
  if (special) {
    suffix = text.substr(3);
  } else {
    std::tie(digits, suffix) = split_number(text);
  }
  std::string sign = negative ? "-" : "";
  bool float_syntax = digits.find_first_of(".eE") != std::string_view::npos;
  DataType type = DataType::i32();
  if (!suffix.empty()) {
    auto parsed = parse_dtype(suffix);
    if (!parsed || !parsed->is_scalar() || parsed->is_bool()) {
      fail(token,
           fmt::format("unknown literal type suffix '{}' (expected i8, i32, i64, f16, bf16, f32 or f64)", suffix));
    }
    type = *parsed;
  } else if (float_syntax) {
    fail(token, fmt::format("float literal {}{} needs a type suffix, as in 0.5f32", sign, text));
  }
  if (special) {
    if (!type.is_float()) fail(token, fmt::format("{} is not a float type", to_string(type)));
    double value =
        text.substr(0, 3) == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    return FloatImmNode::make(type, negative ? -value : value);
  }
  if (type.is_float()) {
    auto value = text::parse_float_digits(type, digits);
    if (!value) fail(token, fmt::format("literal {}{} does not fit {}", sign, text, to_string(type)));
    return FloatImmNode::make(type, negative ? -*value : *value);
  }
  if (float_syntax) fail(token, fmt::format("integer literal {}{} has a fraction or exponent", sign, text));
  uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  bool fits = ec == std::errc() && ptr == digits.data() + digits.size();
  int64_t value = 0;
  if (fits) {
    if (negative) {
      uint64_t limit = uint64_t{0} - static_cast<uint64_t>(int_min_value(type));
      fits = magnitude <= limit;
      value = static_cast<int64_t>(uint64_t{0} - magnitude);
    } else {
      fits = magnitude <= static_cast<uint64_t>(int_max_value(type));
      value = static_cast<int64_t>(magnitude);
    }
  }
  if (!fits) fail(token, fmt::format("literal {}{} does not fit {}", sign, text, to_string(type)));
  return IntImmNode::make(type, value);
}

std::vector<Expr> Parser::parse_args(const Token& name) {
  expect("(", "after " + name.text);
  std::vector<Expr> args;
  while (!at(")")) {
    args.push_back(parse_expr());
    if (!accept(",")) break;
  }
  expect(")", "to close the arguments of " + name.text);
  return args;
}

Expr Parser::parse_call(const Token& name) {
  const std::string& f = name.text;
  std::vector<Expr> args = parse_args(name);
  auto arity = [&](size_t n) {
    if (args.size() != n)
      fail(name, fmt::format("{} takes {} argument{}, got {}", f, n, n == 1 ? "" : "s", args.size()));
  };
  auto same_types = [&](size_t from) {
    for (size_t i = from + 1; i < args.size(); ++i) {
      if (args[i].dtype() != args[from].dtype()) {
        fail(name, fmt::format("arguments of {} differ in type: {} and {}", f, to_string(args[from].dtype()),
                               to_string(args[i].dtype())));
      }
    }
  };
  if (f == "select") {
    arity(3);
    if (!args[0].dtype().is_bool()) {
      fail(name, fmt::format("condition of select must be bool, got {}", to_string(args[0].dtype())));
    }
    same_types(1);
    return SelectNode::make(args[0], args[1], args[2]);
  }
  if (f == "min" || f == "max" || f == "truncmod") {
    arity(2);
    same_types(0);
    DataType type = args[0].dtype();
    if (type.is_bool()) fail(name, fmt::format("{} does not apply to bool", f));
    if (f == "truncmod" && !type.is_int()) fail(name, fmt::format("truncmod needs integers, got {}", to_string(type)));
    if (f == "min") return MinNode::make(args[0], args[1]);
    if (f == "max") return MaxNode::make(args[0], args[1]);
    return ModNode::make(args[0], args[1]);
  }
  if (auto dtype = parse_dtype(f)) {
    arity(1);
    if (dtype->lanes() != args[0].dtype().lanes()) {
      fail(name, fmt::format("cast from {} to {} changes lanes", to_string(args[0].dtype()), to_string(*dtype)));
    }
    return CastNode::make(*dtype, args[0]);
  }
  for (const IntrinsicInfo& info : kIntrinsics) {
    if (info.spelling != f) continue;
    arity(static_cast<size_t>(info.arity));
    if (info.kind == 'E') {
      for (const Expr& arg : args) {
        if (!as_const_int(arg)) fail(name, fmt::format("{} takes integer constants", f));
      }
      return CallNode::make(info.op, std::move(args));
    }
    same_types(0);
    DataType type = args[0].dtype();
    bool ok = info.kind == 'A' ? (type.is_int() || type.is_float()) : type.is_float();
    if (!ok) {
      fail(name, fmt::format("{} needs {} arguments, got {}", f, info.kind == 'A' ? "integer or float" : "float",
                             to_string(type)));
    }
    return CallNode::make(info.op, std::move(args));
  }
  fail(name, fmt::format("unknown function '{}'", f));
}

}  // namespace dragon::ir::parser
