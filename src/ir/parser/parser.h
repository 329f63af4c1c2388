// The recursive-descent parser of the IR text, shared by its two halves: statements and
// functions (parser.cc) and expressions and literals (parse_expr.cc). Internal to ir.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dragon/ir/function.h"
#include "lexer.h"

namespace dragon::ir::parser {

class Parser {
 public:
  Parser(std::string_view text, std::string_view source_name);
  PrimFunc parse_function();

 private:
  // Tokens.
  const Token& peek(size_t ahead = 0) const;
  const Token& next();
  bool at(std::string_view text, size_t ahead = 0) const;  // a punctuation or identifier spelled `text`
  bool accept(std::string_view text);
  const Token& expect(std::string_view text, std::string_view context = {});
  [[noreturn]] void fail(const Token& at, std::string_view message) const;
  static std::string describe(const Token& token);

  // Names.
  std::string expect_name(std::string_view what);
  std::string expect_label(std::string_view what);  // block and function names, scopes, tags
  DataType expect_dtype();
  int64_t expect_extent();
  Annotations parse_annotations();

  // Scopes. Variables are looked up from the innermost frame down to var_floor_ (a block
  // body sees nothing outside); buffers through every frame.
  Var find_var(const Token& name) const;
  Buffer find_buffer(const Token& name) const;
  void push_var(const std::string& name, const Var& var) { var_frames_.back().emplace_back(name, var); }
  void push_buffer(const std::string& name, const Buffer& buffer) { buffer_frames_.back().emplace_back(name, buffer); }

  // Statements (parser.cc).
  Stmt parse_stmt();
  Stmt parse_body(const Token& open, std::string_view what);
  std::vector<Stmt> parse_stmts_until_close(const Token& open, std::string_view what);
  Stmt parse_for();
  Stmt parse_block();
  Stmt parse_if();
  Stmt parse_store();
  Buffer parse_alloc_head();
  Stmt parse_allocate(const Buffer& buffer);
  BufferRegion parse_region();
  Range parse_range(std::string_view what);
  std::vector<Expr> parse_indices(const Buffer& buffer, const Token& name);

  // Expressions (parse_expr.cc).
  Expr parse_expr();
  Expr parse_binary(int level);
  Expr parse_unary();
  Expr parse_primary();
  // A literal; `minus` is the '-' glued in front of it, if any (errors point at it).
  Expr parse_number(const Token& token, const Token* minus);
  Expr parse_call(const Token& name);
  Expr make_binary(const Token& op, Expr a, Expr b);
  std::vector<Expr> parse_args(const Token& name);
  void require_int(const Token& at, const Expr& e, std::string_view what) const;

  // Guards recursion so deeply nested input is an error, not a stack overflow.
  class DepthGuard {
   public:
    DepthGuard(Parser& p, const Token& at);
    ~DepthGuard() { --parser_.depth_; }

   private:
    Parser& parser_;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::string source_;
  int depth_ = 0;
  std::vector<std::vector<std::pair<std::string, Var>>> var_frames_;
  size_t var_floor_ = 0;
  std::vector<std::vector<std::pair<std::string, Buffer>>> buffer_frames_;
};

}  // namespace dragon::ir::parser
