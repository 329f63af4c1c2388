// The C-like printer base over the flat IR of lower.h: expressions with exact C
// semantics, statements, names and types. The CPU and CUDA emitters derive from it and
// override only what differs (CONVENTIONS.md habit 12). Not a lowering pass: it prints
// what it is given and rejects block IR.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "dragon/ir/functor.h"
#include "dragon/ir/simplify.h"

namespace dragon::codegen {

// Unique C identifiers for IR variables and buffers (two IR variables may share a name;
// C names may not). Deterministic: the same IR prints the same names.
class NameTable {
 public:
  NameTable();
  // The identifier of `key`, made from `hint` the first time it is asked for.
  std::string get(const void* key, std::string_view hint);
  // A fresh identifier that no key has (temporaries).
  std::string fresh(std::string_view hint);
  void reserve(std::string_view name) { used_.insert(std::string(name)); }

 private:
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
};

class CPrinter : protected ir::StmtFunctor<void>, protected ir::ExprFunctor<std::string> {
 public:
  ~CPrinter() override = default;

  // An expression on one line (for tests and for emitters).
  std::string print_expr(const ir::Expr& e) { return ExprFunctor<std::string>::visit(e); }
  // A statement at the current indentation, appended to the output.
  void print_stmt(const ir::Stmt& s) { StmtFunctor<void>::visit(s); }

  // The C spelling of a scalar type: float, double, int32_t, bool, or the emitter's
  // 16-bit float types.
  std::string type_name(ir::DataType dtype) const;

 protected:
  // ---- What each target spells differently ---------------------------------------------
  virtual std::string f16_type() const = 0;
  virtual std::string bf16_type() const = 0;
  // A 16-bit float value widened to float, and a float or double rounded (to nearest
  // even) to a 16-bit float type.
  virtual std::string half_to_float(const std::string& value, ir::DataType from) const = 0;
  virtual std::string float_to_half(const std::string& value, ir::DataType from, ir::DataType to) const = 0;
  // The math library function for an f32 or f64 intrinsic ("expf", "exp").
  virtual std::string math_call(ir::Intrinsic op, ir::DataType dtype, const std::vector<std::string>& args) const;
  // The function float min/max call ("fmaxf" for f32 and the 16-bit types, "fmin" for f64);
  // a NaN operand must yield the other operand.
  virtual std::string float_extremum(std::string_view which, bool f64) const;
  // Effect intrinsics (sync_threads) as a statement.
  virtual void print_effect(const ir::CallNode* call);
  // Loop kinds: the default prints a plain serial loop under loop_pragma().
  virtual void print_for(const ir::ForNode* op);
  virtual std::string loop_pragma(const ir::ForNode* op) const { return {}; }
  virtual void print_allocate(const ir::AllocateNode* op) = 0;
  // The qualifiers of a buffer pointer declared as a kernel or function parameter.
  virtual std::string restrict_qualifier() const { return "__restrict__"; }

  // ---- Helpers for emitters ------------------------------------------------------------
  void line(std::string_view text);
  void open(std::string_view header);  // "header {" and indent
  void close(std::string_view trailer = "}");
  std::string var_name(const ir::Var& v) { return names_.get(v.get(), v->name); }
  std::string var_name(const ir::VarNode* v) { return names_.get(v, v->name); }
  std::string buffer_name(const ir::Buffer& b) { return names_.get(b.get(), b->name); }
  std::string buffer_name(const ir::BufferNode* b) { return names_.get(b, b->name); }
  virtual std::string flat_index(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices);
  // flat_index, or the local an index was hoisted into (hoist_guarded_indices).
  std::string index_text(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices);
  // For an `if` around one store, with no else: opens a scope and declares its store's and
  // loads' indices before the `if` as locals (those free of loads and calls, and not a
  // constant or a variable), and returns true; the caller closes the scope after the `if`.
  // Under a guard, each unrolled copy of a fetch loop recomputed the same index terms (an
  // implicit GEMM's k decomposed by div and mod 12 times a k-step where 2 are distinct):
  // the compiler does not share work between guarded blocks, but shares what dominates them.
  bool hoist_guarded_indices(const ir::IfThenElseNode* op);
  void end_hoisted_indices();  // forgets the locals and closes their scope
  // Binds a loop variable's range for alignment proofs below it.
  void bind_loop(const ir::ForNode* op);
  void print_loop_header(const ir::ForNode* op);

  std::ostringstream out_;
  int indent_ = 0;
  NameTable names_;
  ir::Analyzer analyzer_;
  // While printing one lane of a vectorized loop: variables and loads printed as given.
  std::unordered_map<const ir::VarNode*, std::string> var_override_;
  std::unordered_map<const ir::BufferLoadNode*, std::string> load_override_;
  // Index lists (a store's or a load's `indices`) printed as the local holding them.
  std::unordered_map<const std::vector<ir::Expr>*, std::string> index_override_;

  // ---- Expressions ---------------------------------------------------------------------
  std::string visit_(const ir::IntImmNode* op) override;
  std::string visit_(const ir::FloatImmNode* op) override;
  std::string visit_(const ir::VarNode* op) override;
  std::string visit_(const ir::AddNode* op) override { return arith("+", op->a, op->b, op->dtype); }
  std::string visit_(const ir::SubNode* op) override { return arith("-", op->a, op->b, op->dtype); }
  std::string visit_(const ir::MulNode* op) override { return arith("*", op->a, op->b, op->dtype); }
  std::string visit_(const ir::DivNode* op) override { return arith("/", op->a, op->b, op->dtype); }
  std::string visit_(const ir::ModNode* op) override;
  std::string visit_(const ir::FloorDivNode* op) override;
  std::string visit_(const ir::FloorModNode* op) override;
  std::string visit_(const ir::MinNode* op) override { return extremum("min", op->a, op->b, op->dtype); }
  std::string visit_(const ir::MaxNode* op) override { return extremum("max", op->a, op->b, op->dtype); }
  std::string visit_(const ir::EQNode* op) override { return compare("==", op->a, op->b); }
  std::string visit_(const ir::NENode* op) override { return compare("!=", op->a, op->b); }
  std::string visit_(const ir::LTNode* op) override { return compare("<", op->a, op->b); }
  std::string visit_(const ir::LENode* op) override { return compare("<=", op->a, op->b); }
  std::string visit_(const ir::GTNode* op) override { return compare(">", op->a, op->b); }
  std::string visit_(const ir::GENode* op) override { return compare(">=", op->a, op->b); }
  std::string visit_(const ir::AndNode* op) override;
  std::string visit_(const ir::OrNode* op) override;
  std::string visit_(const ir::NotNode* op) override;
  std::string visit_(const ir::SelectNode* op) override;
  std::string visit_(const ir::CastNode* op) override;
  std::string visit_(const ir::CallNode* op) override;
  std::string visit_(const ir::BufferLoadNode* op) override;

  // ---- Statements ----------------------------------------------------------------------
  void visit_(const ir::ForNode* op) override { print_for(op); }
  void visit_(const ir::BlockNode* op) override;
  void visit_(const ir::BlockRealizeNode* op) override;
  void visit_(const ir::SeqStmtNode* op) override;
  void visit_(const ir::IfThenElseNode* op) override;
  void visit_(const ir::BufferStoreNode* op) override;
  void visit_(const ir::AllocateNode* op) override { print_allocate(op); }
  void visit_(const ir::EvaluateNode* op) override;

  // A value of `from` converted with the IR's cast semantics (CastNode).
  std::string convert(const std::string& value, ir::DataType from, ir::DataType to) const;
  bool is_half(ir::DataType t) const { return t.is_float() && t.bits() == 16; }
  // Whether floordiv(a, b) and floormod(a, b) may be printed as C's / and %.
  bool is_plain_division(const ir::Expr& a, const ir::Expr& b) const;

 private:
  std::string arith(std::string_view op, const ir::Expr& a, const ir::Expr& b, ir::DataType dtype);
  std::string compare(std::string_view op, const ir::Expr& a, const ir::Expr& b);
  std::string extremum(std::string_view which, const ir::Expr& a, const ir::Expr& b, ir::DataType dtype);
  // The operand as float when it is a 16-bit float (arithmetic on f16 and bf16 is done in
  // float and rounded back after each operation, which is exact for + - * / and sqrt).
  std::string widened(const ir::Expr& e);
};

// The helpers both targets share (floordiv, floormod, saturating float -> int), written
// once over the macro DRAGON_INLINE that each prelude defines first.
std::string_view common_prelude();

}  // namespace dragon::codegen
