// The IR text parser: functions, parameters, statements, blocks, regions and scoping
// (docs/ir-text.md). Every rule make() would enforce is checked first and reported as a
// UserError at the offending token. Expressions are in parse_expr.cc.
#include "parser.h"

#include <charconv>
#include <limits>

#include "../text_format.h"
#include "dragon/ir/op.h"
#include "dragon/ir/parser.h"
#include "dragon/ir/verify.h"
#include "dragon/support/error.h"

namespace dragon::ir::parser {

namespace {
// Real IR nests a few dozen levels; the bound keeps a hostile input from overflowing the stack.
constexpr int kMaxDepth = 256;
}  // namespace

Parser::DepthGuard::DepthGuard(Parser& p, const Token& at) : parser_(p) {
  if (++parser_.depth_ > kMaxDepth) {
    --parser_.depth_;
    parser_.fail(at, fmt::format("nesting deeper than {} levels", kMaxDepth));
  }
}

Parser::Parser(std::string_view text, std::string_view source_name)
    : tokens_(tokenize(text, source_name)), source_(source_name) {
  var_frames_.emplace_back();
  buffer_frames_.emplace_back();
}

const Token& Parser::peek(size_t ahead) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }

const Token& Parser::next() {
  const Token& token = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return token;
}

bool Parser::at(std::string_view text, size_t ahead) const {
  const Token& t = peek(ahead);
  return (t.kind == TokenKind::kPunct || t.kind == TokenKind::kIdent) && t.text == text;
}

bool Parser::accept(std::string_view text) {
  if (!at(text)) return false;
  next();
  return true;
}

const Token& Parser::expect(std::string_view text, std::string_view context) {
  if (!at(text)) {
    std::string message = fmt::format("expected '{}'", text);
    if (!context.empty()) message += fmt::format(" {}", context);
    fail(peek(), message + ", found " + describe(peek()));
  }
  return next();
}

void Parser::fail(const Token& at, std::string_view message) const {
  throw UserError::at(source_, at.line, at.column, message);
}

std::string Parser::describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kEnd: return "end of input";
    case TokenKind::kString: return "string " + text::quote(token.text);
    default: return "'" + token.text + "'";
  }
}

std::string Parser::expect_name(std::string_view what) {
  const Token& t = peek();
  if (t.kind != TokenKind::kIdent) fail(t, fmt::format("expected a {} name, found {}", what, describe(t)));
  if (!text::is_identifier(t.text)) fail(t, fmt::format("a {} name cannot contain '.': '{}'", what, t.text));
  if (text::is_reserved_word(t.text)) {
    fail(t, fmt::format("'{}' is a reserved word and cannot name a {}", t.text, what));
  }
  return next().text;
}

std::string Parser::expect_label(std::string_view what) {
  const Token& t = peek();
  if (t.kind == TokenKind::kString) {
    if (t.text.empty()) fail(t, fmt::format("empty {}", what));
    return next().text;
  }
  if (t.kind != TokenKind::kIdent) fail(t, fmt::format("expected a {}, found {}", what, describe(t)));
  return next().text;
}

DataType Parser::expect_dtype() {
  const Token& t = peek();
  if (t.kind == TokenKind::kIdent) {
    if (auto dtype = parse_dtype(t.text)) {
      next();
      return *dtype;
    }
  }
  fail(t, fmt::format("expected a dtype ({}), found {}", scalar_dtype_names(), describe(t)));
}

int64_t Parser::expect_extent() {
  const Token& t = peek();
  int64_t value = -1;
  if (t.kind == TokenKind::kNumber) {
    auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), value);
    if (ec == std::errc::result_out_of_range) fail(t, fmt::format("shape extent {} is too large", t.text));
    if (ec != std::errc() || ptr != t.text.data() + t.text.size()) value = -1;
  }
  if (value < 0) fail(t, fmt::format("expected a shape extent (a plain integer >= 0), found {}", describe(t)));
  next();
  return value;
}

Annotations Parser::parse_annotations() {
  Annotations annotations;
  if (!at("@")) return annotations;
  next();
  expect("{", "after '@'");
  while (!at("}")) {
    const Token& key_token = peek();
    std::string key = expect_label("annotation key");
    if (annotations.count(key)) fail(key_token, fmt::format("duplicate annotation key '{}'", key));
    expect("=", "after an annotation key");
    const Token& t = peek();
    bool negative = false;
    if (at("-")) {
      negative = true;
      next();
    }
    const Token& v = peek();
    AnnotationValue value;
    if (v.kind == TokenKind::kString && !negative) {
      value = v.text;
    } else if (v.kind == TokenKind::kIdent && (v.text == "inf" || v.text == "nan")) {
      double d = v.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      value = negative ? -d : d;
    } else if (v.kind == TokenKind::kNumber) {
      const char* first = v.text.data();
      const char* last = first + v.text.size();
      if (v.text.find_first_of(".eE") == std::string::npos) {
        uint64_t magnitude = 0;
        auto [ptr, ec] = std::from_chars(first, last, magnitude);
        uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
        if (ec != std::errc() || ptr != last || magnitude > limit) {
          fail(t, fmt::format("annotation value {} is not an i64 integer", v.text));
        }
        value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      } else {
        double d = 0;
        auto [ptr, ec] = std::from_chars(first, last, d);
        if (ec != std::errc() || ptr != last) fail(t, fmt::format("annotation value {} is not a number", v.text));
        value = negative ? -d : d;
      }
    } else {
      fail(v, "an annotation value is an integer, a number or a quoted string, found " + describe(v));
    }
    next();
    annotations.emplace(std::move(key), std::move(value));
    if (!accept(",")) break;
  }
  expect("}", "to close the annotations");
  return annotations;
}

Var Parser::find_var(const Token& name) const {
  for (size_t f = var_frames_.size(); f-- > var_floor_;) {
    const auto& frame = var_frames_[f];
    for (auto it = frame.rbegin(); it != frame.rend(); ++it) {
      if (it->first == name.text) return it->second;
    }
  }
  for (size_t f = 0; f < var_floor_; ++f) {
    for (const auto& entry : var_frames_[f]) {
      if (entry.first == name.text) {
        fail(name, fmt::format("variable '{}' is defined outside this block, and a block sees only its own "
                               "iteration variables",
                               name.text));
      }
    }
  }
  fail(name, fmt::format("unknown variable '{}'", name.text));
}

Buffer Parser::find_buffer(const Token& name) const {
  for (size_t f = buffer_frames_.size(); f-- > 0;) {
    const auto& frame = buffer_frames_[f];
    for (auto it = frame.rbegin(); it != frame.rend(); ++it) {
      if (it->first == name.text) return it->second;
    }
  }
  fail(name, fmt::format("unknown buffer '{}'", name.text));
}

PrimFunc Parser::parse_function() {
  const Token& func_token = expect("func", "to start a function");
  std::string name = expect_label("function name");
  expect("(", "after the function name");
  std::vector<Param> params;
  while (!at(")")) {
    const Token& role_token = peek();
    Param param;
    if (accept("in")) {
      param.role = ParamRole::kInput;
    } else if (accept("out")) {
      param.role = ParamRole::kOutput;
    } else if (accept("inout")) {
      param.role = ParamRole::kInOut;
    } else {
      fail(role_token, "expected a parameter role (in, out or inout), found " + describe(role_token));
    }
    const Token& name_token = peek();
    std::string buffer_name = expect_name("buffer");
    for (const auto& [existing, buffer] : buffer_frames_.back()) {
      if (existing == buffer_name) fail(name_token, fmt::format("duplicate parameter '{}'", buffer_name));
    }
    expect(":", "after the parameter name");
    DataType dtype = expect_dtype();
    expect("[", "to open the shape");
    std::vector<int64_t> shape;
    while (!at("]")) {
      shape.push_back(expect_extent());
      if (!accept(",")) break;
    }
    expect("]", "to close the shape");
    param.buffer = Buffer::make(buffer_name, dtype, std::move(shape));
    if (accept("positive")) {
      param.domain = ValueDomain::positive();
    } else if (accept("simplex")) {
      param.domain = ValueDomain::simplex();
    } else if (at("range") || at("offsets")) {
      bool is_range = next().text == "range";
      expect("(", is_range ? "after 'range'" : "after 'offsets'");
      int64_t values[2];
      for (int i = 0; i < 2; ++i) {
        if (i) expect(",", "between the domain's bounds");
        const Token& t = peek();
        bool negative = accept("-");
        const Token& number = peek();
        uint64_t magnitude = 0;
        bool ok = number.kind == TokenKind::kNumber;
        if (ok) {
          auto [ptr, ec] = std::from_chars(number.text.data(), number.text.data() + number.text.size(), magnitude);
          ok = ec == std::errc() && ptr == number.text.data() + number.text.size() &&
               magnitude <= (negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1);
        }
        if (!ok) fail(t, "a domain bound is a plain i64 integer, found " + describe(number));
        next();
        values[i] = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
      }
      expect(")", "to close the domain");
      param.domain =
          is_range ? ValueDomain::int_range(values[0], values[1]) : ValueDomain::offsets(values[0], values[1]);
    }
    push_buffer(buffer_name, param.buffer);
    params.push_back(std::move(param));
    if (!accept(",")) break;
  }
  expect(")", "to close the parameters");
  Annotations attrs = parse_annotations();
  const Token& open = expect("{", "to open the function body");
  Stmt body = parse_body(open, "function");
  if (peek().kind != TokenKind::kEnd) fail(peek(), "unexpected " + describe(peek()) + " after the function");
  PrimFunc func = PrimFunc::make(std::move(name), std::move(params), std::move(body), std::move(attrs));
  std::vector<std::string> problems = find_ir_problems(func);
  if (!problems.empty()) {
    std::string message = "ill-formed IR: " + problems[0];
    for (size_t i = 1; i < problems.size(); ++i) message += "; " + problems[i];
    fail(func_token, message);
  }
  return func;
}

std::vector<Stmt> Parser::parse_stmts_until_close(const Token& open, std::string_view what) {
  std::vector<Stmt> stmts;
  while (!at("}")) {
    if (peek().kind == TokenKind::kEnd) {
      fail(peek(), fmt::format("unterminated {} opened at {}:{}: expected '}}'", what, open.line, open.column));
    }
    stmts.push_back(parse_stmt());
  }
  return stmts;
}

Stmt Parser::parse_body(const Token& open, std::string_view what) {
  std::vector<Stmt> stmts = parse_stmts_until_close(open, what);
  if (stmts.empty()) fail(peek(), fmt::format("empty {} body", what));
  next();  // '}'
  return SeqStmtNode::make(std::move(stmts));
}

Stmt Parser::parse_stmt() {
  const Token& t = peek();
  DepthGuard guard(*this, t);
  if (t.kind == TokenKind::kIdent) {
    if (t.text == "for") return parse_for();
    if (t.text == "block") return parse_block();
    if (t.text == "if") return parse_if();
    if (t.text == "alloc") return parse_allocate(parse_alloc_head());
    if (t.text == "eval") {
      next();
      return EvaluateNode::make(parse_expr());
    }
    if (!text::is_reserved_word(t.text)) return parse_store();
  }
  fail(t, "expected a statement, found " + describe(t));
}

Range Parser::parse_range(std::string_view what) {
  const Token& t = peek();
  Expr first = parse_expr();
  Expr min, extent;
  if (accept("+:")) {
    min = first;
    extent = parse_expr();
  } else {
    extent = first;
  }
  if (!extent.dtype().is_int() || !extent.dtype().is_scalar()) {
    fail(t, fmt::format("{} extent must be an integer, got {}", what, to_string(extent.dtype())));
  }
  if (!min.defined()) min = make_zero(extent.dtype());
  if (min.dtype() != extent.dtype()) {
    fail(t, fmt::format("{} min and extent differ in type: {} and {}", what, to_string(min.dtype()),
                        to_string(extent.dtype())));
  }
  return Range::make(min, extent);
}

Stmt Parser::parse_for() {
  next();  // for
  std::string name = expect_name("loop variable");
  expect("in", "after the loop variable");
  Range range = parse_range("loop");
  ForKind kind = ForKind::kSerial;
  std::string tag;
  if (accept("parallel")) {
    kind = ForKind::kParallel;
  } else if (accept("vectorized")) {
    kind = ForKind::kVectorized;
  } else if (accept("unrolled")) {
    kind = ForKind::kUnrolled;
  } else if (accept("bind")) {
    kind = ForKind::kThreadBinding;
    tag = expect_label("thread tag");
  }
  Annotations annotations = parse_annotations();
  const Token& open = expect("{", "to open the loop body");
  Var var(name, range.extent.dtype());
  var_frames_.emplace_back();
  push_var(name, var);
  Stmt body = parse_body(open, "loop");
  var_frames_.pop_back();
  return ForNode::make(var, range.min, range.extent, kind, std::move(body), std::move(tag), std::move(annotations));
}

Stmt Parser::parse_block() {
  next();  // block
  std::string name = expect_label("block name");
  std::vector<IterVar> iter_vars;
  std::vector<Expr> values;
  std::vector<std::string> names;
  if (accept("[")) {
    while (!at("]")) {
      const Token& name_token = peek();
      std::string var_name = expect_name("iteration variable");
      for (const std::string& n : names) {
        if (n == var_name) fail(name_token, fmt::format("duplicate iteration variable '{}'", var_name));
      }
      expect(":", "after the iteration variable");
      const Token& kind_token = peek();
      IterKind kind;
      if (accept("S")) {
        kind = IterKind::kSpatial;
      } else if (accept("R")) {
        kind = IterKind::kReduce;
      } else if (accept("O")) {
        kind = IterKind::kOrdered;
      } else if (accept("X")) {
        kind = IterKind::kOpaque;
      } else {
        fail(kind_token, "expected an iteration kind (S, R, O or X), found " + describe(kind_token));
      }
      Range dom = parse_range("iteration domain");
      expect("=", "before the binding of " + var_name);
      const Token& value_token = peek();
      Expr value = parse_expr();
      if (value.dtype() != dom.extent.dtype()) {
        fail(value_token, fmt::format("binding of {} has type {}, its domain {}", var_name, to_string(value.dtype()),
                                      to_string(dom.extent.dtype())));
      }
      iter_vars.push_back(IterVar{Var(var_name, dom.extent.dtype()), dom, kind});
      values.push_back(value);
      names.push_back(var_name);
      if (!accept(",")) break;
    }
    expect("]", "to close the iteration variables");
  }
  Expr predicate = make_bool(true);
  if (accept("if")) {
    expect("(", "after 'if'");
    const Token& t = peek();
    predicate = parse_expr();
    if (predicate.dtype() != DataType::boolean()) {
      fail(t, fmt::format("block predicate must be bool, got {}", to_string(predicate.dtype())));
    }
    expect(")", "to close the predicate");
  }
  Annotations annotations = parse_annotations();
  const Token& open = expect("{", "to open the block");

  // The body sees the block's iteration variables and nothing outside.
  size_t saved_floor = var_floor_;
  var_floor_ = var_frames_.size();
  var_frames_.emplace_back();
  for (const IterVar& iv : iter_vars) push_var(iv.var.name(), iv.var);
  std::vector<BufferRegion> reads, writes;
  if (accept("reads")) {
    do reads.push_back(parse_region());
    while (accept(","));
  }
  if (accept("writes")) {
    do writes.push_back(parse_region());
    while (accept(","));
  }
  buffer_frames_.emplace_back();
  std::vector<Buffer> allocs;
  std::vector<Stmt> stmts;
  while (at("alloc")) {
    Buffer buffer = parse_alloc_head();
    if (at("{")) {  // an Allocate statement: the body has begun
      stmts.push_back(parse_allocate(buffer));
      break;
    }
    allocs.push_back(buffer);
    push_buffer(buffer->name, buffer);
  }
  Stmt init;
  if (stmts.empty() && at("init")) {
    next();
    const Token& init_open = expect("{", "after 'init'");
    init = parse_body(init_open, "init");
  }
  std::vector<Stmt> rest = parse_stmts_until_close(open, "block " + name);
  stmts.insert(stmts.end(), rest.begin(), rest.end());
  if (stmts.empty()) fail(peek(), fmt::format("empty body of block {}", name));
  next();  // '}'
  buffer_frames_.pop_back();
  var_frames_.pop_back();
  var_floor_ = saved_floor;

  Block block =
      BlockNode::make(std::move(name), std::move(iter_vars), std::move(reads), std::move(writes),
                      SeqStmtNode::make(std::move(stmts)), std::move(init), std::move(allocs), std::move(annotations));
  return BlockRealizeNode::make(std::move(values), std::move(predicate), std::move(block));
}

BufferRegion Parser::parse_region() {
  const Token& name = peek();
  if (name.kind != TokenKind::kIdent) fail(name, "expected a buffer region, found " + describe(name));
  Buffer buffer = find_buffer(name);
  next();
  expect("[", "after the buffer of a region");
  std::vector<Range> region;
  while (!at("]")) {
    const Token& t = peek();
    Expr first = parse_expr();
    require_int(t, first, "region bound");
    if (accept("+:")) {
      const Token& e = peek();
      Expr extent = parse_expr();
      if (extent.dtype() != first.dtype()) {
        fail(e, fmt::format("region min and extent differ in type: {} and {}", to_string(first.dtype()),
                            to_string(extent.dtype())));
      }
      region.push_back(Range::make(first, extent));
    } else {
      region.push_back(Range::make(first, make_one(first.dtype())));
    }
    if (!accept(",")) break;
  }
  expect("]", "to close the region");
  if (static_cast<int>(region.size()) != buffer.ndim()) {
    fail(name, fmt::format("region of {} has {} dimensions, {} has rank {}", name.text, region.size(), name.text,
                           buffer.ndim()));
  }
  return BufferRegion{buffer, std::move(region)};
}

Buffer Parser::parse_alloc_head() {
  next();  // alloc
  std::string name = expect_name("buffer");
  expect(":", "after the buffer name");
  DataType dtype = expect_dtype();
  expect("[", "to open the shape");
  std::vector<int64_t> shape;
  while (!at("]")) {
    shape.push_back(expect_extent());
    if (!accept(",")) break;
  }
  const Token& close = expect("]", "to close the shape");
  std::string scope = "global";
  // The scope, when there is one, is on the line of the shape.
  const Token& t = peek();
  if ((t.kind == TokenKind::kIdent || t.kind == TokenKind::kString) && t.line == close.end_line) {
    scope = expect_label("scope");
  }
  return Buffer::make(std::move(name), dtype, std::move(shape), std::move(scope));
}

Stmt Parser::parse_allocate(const Buffer& buffer) {
  const Token& open = expect("{", "to open the allocation's body");
  buffer_frames_.emplace_back();
  push_buffer(buffer->name, buffer);
  Stmt body = parse_body(open, "alloc");
  buffer_frames_.pop_back();
  return AllocateNode::make(buffer, std::move(body));
}

Stmt Parser::parse_if() {
  next();  // if
  expect("(", "after 'if'");
  const Token& t = peek();
  Expr condition = parse_expr();
  if (condition.dtype() != DataType::boolean()) {
    fail(t, fmt::format("if condition must be bool, got {}", to_string(condition.dtype())));
  }
  expect(")", "to close the condition");
  const Token& open = expect("{", "to open the then branch");
  Stmt then_case = parse_body(open, "if");
  Stmt else_case;
  if (accept("else")) {
    const Token& else_open = expect("{", "after 'else'");
    else_case = parse_body(else_open, "else");
  }
  return IfThenElseNode::make(std::move(condition), std::move(then_case), std::move(else_case));
}

std::vector<Expr> Parser::parse_indices(const Buffer& buffer, const Token& name) {
  expect("[", "after the buffer name");
  std::vector<Expr> indices;
  while (!at("]")) {
    const Token& t = peek();
    Expr index = parse_expr();
    if (!index.dtype().is_int() || !index.dtype().is_scalar()) {
      fail(t, fmt::format("index of {} must be an integer, got {}", name.text, to_string(index.dtype())));
    }
    indices.push_back(std::move(index));
    if (!accept(",")) break;
  }
  expect("]", "to close the indices");
  if (static_cast<int>(indices.size()) != buffer.ndim()) {
    fail(name, fmt::format("{} has rank {}, indexed with {} indices", name.text, buffer.ndim(), indices.size()));
  }
  return indices;
}

Stmt Parser::parse_store() {
  const Token& name = next();
  Buffer buffer = find_buffer(name);
  std::vector<Expr> indices = parse_indices(buffer, name);
  const Token& eq = expect("=", "in a store");
  Expr value = parse_expr();
  if (value.dtype().element_of() != buffer->dtype) {
    fail(eq, fmt::format("cannot store {} into {} buffer {}", to_string(value.dtype()), to_string(buffer->dtype),
                         name.text));
  }
  return BufferStoreNode::make(buffer, std::move(value), std::move(indices));
}

}  // namespace dragon::ir::parser

namespace dragon::ir {

PrimFunc parse_function(std::string_view text, std::string_view source_name) {
  return parser::Parser(text, source_name).parse_function();
}

}  // namespace dragon::ir
