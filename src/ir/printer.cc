// The canonical IR text printer (docs/ir-text.md): layout, precedence and the naming that
// keeps every printed name unambiguous where it is used. Not the parser (parser/).
#include "dragon/ir/printer.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dragon/ir/functor.h"
#include "text_format.h"

namespace dragon::ir {
namespace {

// Any name turned into an identifier: other characters become '_'.
std::string sanitize(std::string_view name, std::string_view fallback) {
  if (name.empty()) return std::string(fallback);
  std::string out(name);
  for (char& c : out) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) c = '_';
  }
  if (out[0] >= '0' && out[0] <= '9') out.insert(out.begin(), '_');
  return out;
}

// The names visible at one point of the text, for variables or for buffers. A new
// definition never shadows a visible name, so every use reads back to its definition.
class NameScope {
 public:
  const std::string* find(const void* node) const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->first == node) return &it->second;
    }
    return nullptr;
  }

  // Binds `node` to `hint` made an identifier, suffixed _1, _2, ... while that name is
  // visible or reserved.
  std::string define(const void* node, std::string_view hint, std::string_view fallback) {
    std::string base = sanitize(hint, fallback);
    std::string name = base;
    for (int suffix = 1; text::is_reserved_word(name) || visible_[name] > 0; ++suffix) {
      name = base + "_" + std::to_string(suffix);
    }
    ++visible_[name];
    stack_.emplace_back(node, name);
    return name;
  }

  size_t mark() const { return stack_.size(); }
  void pop_to(size_t mark) {
    while (stack_.size() > mark) {
      --visible_[stack_.back().second];
      stack_.pop_back();
    }
  }

 private:
  std::vector<std::pair<const void*, std::string>> stack_;
  std::unordered_map<std::string, int> visible_;
};

// Variables and buffers used but not defined in what is printed (a statement's enclosing
// loop and block variables), in order of first use: their names are reserved first, so no
// definition inside takes them.
class FreeNames : public StmtExprVisitor {
 public:
  std::vector<const VarNode*> vars() const { return filter(used_vars_); }
  std::vector<const BufferNode*> buffers() const { return filter(used_buffers_); }

 protected:
  using StmtExprVisitor::visit_;
  void visit_(const VarNode* op) override { use(used_vars_, op); }
  void visit_(const BufferLoadNode* op) override {
    use(used_buffers_, op->buffer.get());
    ExprVisitor::visit_(op);
  }
  void visit_(const BufferStoreNode* op) override {
    use(used_buffers_, op->buffer.get());
    StmtVisitor::visit_(op);
  }
  void visit_(const ForNode* op) override {
    defined_.insert(op->loop_var.get());
    StmtVisitor::visit_(op);
  }
  void visit_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) defined_.insert(iv.var.get());
    for (const Buffer& b : op->alloc_buffers) defined_.insert(b.get());
    for (const auto* regions : {&op->reads, &op->writes}) {
      for (const BufferRegion& r : *regions) use(used_buffers_, r.buffer.get());
    }
    StmtVisitor::visit_(op);
  }
  void visit_(const AllocateNode* op) override {
    defined_.insert(op->buffer.get());
    StmtVisitor::visit_(op);
  }

 private:
  template <typename T>
  void use(std::vector<const T*>& list, const T* node) {
    if (seen_.insert(node).second) list.push_back(node);
  }
  template <typename T>
  std::vector<const T*> filter(const std::vector<const T*>& used) const {
    std::vector<const T*> free;
    for (const T* node : used) {
      if (!defined_.count(node)) free.push_back(node);
    }
    return free;
  }

  std::vector<const VarNode*> used_vars_;
  std::vector<const BufferNode*> used_buffers_;
  std::unordered_set<const void*> seen_;
  std::unordered_set<const void*> defined_;
};

// Binding strength of an expression's outermost operator; atoms bind tightest.
int precedence(const Expr& e) {
  switch (e.kind()) {
    case NodeKind::Or: return 1;
    case NodeKind::And: return 2;
    case NodeKind::EQ:
    case NodeKind::NE: return 3;
    case NodeKind::LT:
    case NodeKind::LE:
    case NodeKind::GT:
    case NodeKind::GE: return 4;
    case NodeKind::Add:
    case NodeKind::Sub: return 5;
    case NodeKind::Mul:
    case NodeKind::Div:
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod: return 6;
    case NodeKind::Not: return 7;
    default: return 8;
  }
}

bool is_literal(const Expr& e, int64_t value) {
  const auto* imm = e.as<IntImmNode>();
  return imm && imm->value == value;
}

std::string role_word(ParamRole role) {
  switch (role) {
    case ParamRole::kInput: return "in";
    case ParamRole::kOutput: return "out";
    case ParamRole::kInOut: return "inout";
  }
  return "in";
}

std::string annotations_text(const Annotations& annotations) {
  if (annotations.empty()) return "";
  std::string out = " @{";
  bool first = true;
  for (const auto& [key, value] : annotations) {
    if (!first) out += ", ";
    first = false;
    out += text::dotted_or_quoted(key) + " = " + text::annotation_value(value);
  }
  return out + "}";
}

std::string type_text(const Buffer& buffer) {
  std::string out = to_string(buffer->dtype) + "[";
  for (size_t i = 0; i < buffer->shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(buffer->shape[i]);
  }
  return out + "]";
}

class Printer : public ExprFunctor<std::string>, public StmtFunctor<void> {
 public:
  using ExprFunctor<std::string>::visit;
  using StmtFunctor<void>::visit;

  std::string take() { return std::move(out_); }

  // Reserves the names of what `collected` found free, before anything is printed.
  void reserve_free_names(const FreeNames& collected) {
    for (const VarNode* var : collected.vars()) {
      vars_.define(var, var->name, "v");
      free_vars_.push_back(var);
    }
    for (const BufferNode* buffer : collected.buffers()) {
      if (!buffers_.find(buffer)) buffers_.define(buffer, buffer->name, "buf");  // parameters are named
    }
  }

  // `free` holds what the body uses without defining: the parameters, and in ill-formed IR
  // anything else.
  void print_function(const PrimFunc& func, const FreeNames& free) {
    std::string head = "func " + text::dotted_or_quoted(func->name) + "(";
    for (size_t i = 0; i < func->params.size(); ++i) {
      const Param& p = func->params[i];
      if (i) head += ", ";
      head += role_word(p.role) + " " + buffers_.define(p.buffer.get(), p.buffer->name, "buf") + ": " +
              type_text(p.buffer) + domain_text(p.domain);
    }
    head += ")" + annotations_text(func->attrs) + " {";
    reserve_free_names(free);
    line(head);
    ++indent_;
    visit(func->body);
    --indent_;
    line("}");
  }

 private:
  static std::string domain_text(const ValueDomain& d) {
    switch (d.kind) {
      case ValueDomain::Kind::kReal: return "";
      case ValueDomain::Kind::kPositive: return " positive";
      case ValueDomain::Kind::kSimplex: return " simplex";
      case ValueDomain::Kind::kIntRange: return " range(" + std::to_string(d.lo) + ", " + std::to_string(d.hi) + ")";
      case ValueDomain::Kind::kOffsets:
        return " offsets(" + std::to_string(d.total) + ", " + std::to_string(d.max_len) + ")";
    }
    return "";
  }

  void line(std::string_view text) {
    out_.append(2 * indent_, ' ');
    out_ += text;
    out_ += '\n';
  }

  std::string var_name(const VarNode* var) const {
    const std::string* name = vars_.find(var);
    return name ? *name : sanitize(var->name, "v");
  }
  std::string buffer_name(const Buffer& buffer) const {
    const std::string* name = buffers_.find(buffer.get());
    return name ? *name : sanitize(buffer->name, "buf");
  }

  // `min +: extent`, or just the extent when min is a zero of the extent's type.
  std::string range_text(const Expr& min, const Expr& extent) {
    if (is_literal(min, 0) && min.dtype() == extent.dtype()) return visit(extent);
    return visit(min) + " +: " + visit(extent);
  }

  std::string region_text(const BufferRegion& r) {
    std::string out = buffer_name(r.buffer) + "[";
    for (size_t i = 0; i < r.region.size(); ++i) {
      if (i) out += ", ";
      const Range& range = r.region[i];
      if (is_literal(range.extent, 1) && range.extent.dtype() == range.min.dtype()) {
        out += visit(range.min);
      } else {
        out += visit(range.min) + " +: " + visit(range.extent);
      }
    }
    return out + "]";
  }

  std::string regions_line(std::string_view keyword, const std::vector<BufferRegion>& regions) {
    std::string out(keyword);
    for (size_t i = 0; i < regions.size(); ++i) out += (i ? ", " : " ") + region_text(regions[i]);
    return out;
  }

  std::string alloc_head(const Buffer& buffer) {
    std::string out = "alloc " + buffers_.define(buffer.get(), buffer->name, "buf") + ": " + type_text(buffer);
    if (buffer->scope != "global") out += " " + text::dotted_or_quoted(buffer->scope);
    return out;
  }

  std::string operand(const Expr& e, int min_precedence) {
    std::string text = visit(e);
    return precedence(e) < min_precedence ? "(" + text + ")" : text;
  }
  // Left-associative: a right operand of equal precedence needs parentheses.
  std::string infix(const Expr& a, std::string_view op, const Expr& b, int p) {
    return operand(a, p) + " " + std::string(op) + " " + operand(b, p + 1);
  }
  std::string call(std::string_view name, const std::vector<Expr>& args) {
    std::string out(name);
    out += "(";
    for (size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + visit(args[i]);
    return out + ")";
  }
  std::string indices_text(const std::vector<Expr>& indices) {
    std::string out = "[";
    for (size_t i = 0; i < indices.size(); ++i) out += (i ? ", " : "") + visit(indices[i]);
    return out + "]";
  }

  // Expressions.
  std::string visit_(const IntImmNode* op) override {
    if (op->dtype.is_bool()) return op->value ? "true" : "false";
    std::string digits = std::to_string(op->value);
    return op->dtype == DataType::i32() ? digits : digits + to_string(op->dtype);
  }
  std::string visit_(const FloatImmNode* op) override { return text::float_literal(op->dtype, op->value); }
  std::string visit_(const VarNode* op) override { return var_name(op); }
  std::string visit_(const AddNode* op) override { return infix(op->a, "+", op->b, 5); }
  std::string visit_(const SubNode* op) override { return infix(op->a, "-", op->b, 5); }
  std::string visit_(const MulNode* op) override { return infix(op->a, "*", op->b, 6); }
  std::string visit_(const DivNode* op) override { return infix(op->a, "/", op->b, 6); }
  std::string visit_(const ModNode* op) override { return call("truncmod", {op->a, op->b}); }
  std::string visit_(const FloorDivNode* op) override { return infix(op->a, "//", op->b, 6); }
  std::string visit_(const FloorModNode* op) override { return infix(op->a, "%", op->b, 6); }
  std::string visit_(const MinNode* op) override { return call("min", {op->a, op->b}); }
  std::string visit_(const MaxNode* op) override { return call("max", {op->a, op->b}); }
  std::string visit_(const EQNode* op) override { return infix(op->a, "==", op->b, 3); }
  std::string visit_(const NENode* op) override { return infix(op->a, "!=", op->b, 3); }
  std::string visit_(const LTNode* op) override { return infix(op->a, "<", op->b, 4); }
  std::string visit_(const LENode* op) override { return infix(op->a, "<=", op->b, 4); }
  std::string visit_(const GTNode* op) override { return infix(op->a, ">", op->b, 4); }
  std::string visit_(const GENode* op) override { return infix(op->a, ">=", op->b, 4); }
  std::string visit_(const AndNode* op) override { return infix(op->a, "&&", op->b, 2); }
  std::string visit_(const OrNode* op) override { return infix(op->a, "||", op->b, 1); }
  std::string visit_(const NotNode* op) override { return "!" + operand(op->a, 7); }
  std::string visit_(const SelectNode* op) override {
    return call("select", {op->condition, op->true_value, op->false_value});
  }
  std::string visit_(const CastNode* op) override { return call(to_string(op->dtype), {op->value}); }
  std::string visit_(const CallNode* op) override { return call(intrinsic_name(op->op), op->args); }
  std::string visit_(const BufferLoadNode* op) override { return buffer_name(op->buffer) + indices_text(op->indices); }

  // Statements.
  void visit_(const ForNode* op) override {
    std::string head = "for ";
    std::string range = range_text(op->min, op->extent);
    size_t mark = vars_.mark();
    head += vars_.define(op->loop_var.get(), op->loop_var.name(), "v") + " in " + range;
    switch (op->for_kind) {
      case ForKind::kSerial: break;
      case ForKind::kParallel: head += " parallel"; break;
      case ForKind::kVectorized: head += " vectorized"; break;
      case ForKind::kUnrolled: head += " unrolled"; break;
      case ForKind::kThreadBinding: head += " bind " + text::dotted_or_quoted(op->thread_tag); break;
    }
    line(head + annotations_text(op->annotations) + " {");
    ++indent_;
    visit(op->body);
    --indent_;
    line("}");
    vars_.pop_to(mark);
  }

  void visit_(const BlockNode* op) override { print_block(op, nullptr); }
  void visit_(const BlockRealizeNode* op) override { print_block(op->block.get(), op); }

  // A bare block prints like its realization without bindings.
  void print_block(const BlockNode* block, const BlockRealizeNode* realize) {
    NameScope inner;
    for (const VarNode* var : free_vars_) inner.define(var, var->name, "v");
    std::string head = "block " + text::dotted_or_quoted(block->name);
    if (!block->iter_vars.empty()) {
      head += " [";
      for (size_t i = 0; i < block->iter_vars.size(); ++i) {
        const IterVar& iv = block->iter_vars[i];
        if (i) head += ", ";
        head += inner.define(iv.var.get(), iv.var.name(), "v") + ": " + std::string(iter_kind_name(iv.kind)) + " " +
                range_text(iv.dom.min, iv.dom.extent);
        if (realize && i < realize->iter_values.size()) head += " = " + visit(realize->iter_values[i]);
      }
      head += "]";
    }
    if (realize && realize->predicate.defined()) {
      const auto* imm = realize->predicate.as<IntImmNode>();
      if (!(imm && imm->dtype == DataType::boolean() && imm->value == 1)) {
        head += " if (" + visit(realize->predicate) + ")";
      }
    }
    line(head + annotations_text(block->annotations) + " {");
    ++indent_;
    // The block body sees only its own iteration variables.
    std::swap(vars_, inner);
    if (!block->reads.empty()) line(regions_line("reads", block->reads));
    if (!block->writes.empty()) line(regions_line("writes", block->writes));
    size_t mark = buffers_.mark();
    for (const Buffer& buffer : block->alloc_buffers) line(alloc_head(buffer));
    if (block->init.defined()) {
      line("init {");
      ++indent_;
      visit(block->init);
      --indent_;
      line("}");
    }
    if (block->body.defined()) visit(block->body);
    buffers_.pop_to(mark);
    std::swap(vars_, inner);
    --indent_;
    line("}");
  }

  void visit_(const SeqStmtNode* op) override {
    for (const Stmt& s : op->seq) visit(s);
  }

  void visit_(const IfThenElseNode* op) override {
    line("if (" + visit(op->condition) + ") {");
    ++indent_;
    visit(op->then_case);
    --indent_;
    if (op->else_case.defined()) {
      line("} else {");
      ++indent_;
      visit(op->else_case);
      --indent_;
    }
    line("}");
  }

  void visit_(const BufferStoreNode* op) override {
    line(buffer_name(op->buffer) + indices_text(op->indices) + " = " + visit(op->value));
  }

  void visit_(const AllocateNode* op) override {
    size_t mark = buffers_.mark();
    line(alloc_head(op->buffer) + " {");
    ++indent_;
    visit(op->body);
    --indent_;
    line("}");
    buffers_.pop_to(mark);
  }

  void visit_(const EvaluateNode* op) override {
    // Two statements, not `line("eval " + visit(op->value))`: GCC 12 at -O3 (ipa-cp with
    // devirtualization) compiled that one-liner, reached through StmtFunctor::visit, into
    // a tail call to memcpy that read past the node (tests crashed in Release builds).
    std::string value = visit(op->value);
    line("eval " + value);
  }

  std::string out_;
  int indent_ = 0;
  NameScope vars_;
  NameScope buffers_;
  // Free variables stay visible inside blocks too (a printed statement's block variables).
  std::vector<const VarNode*> free_vars_;
};

}  // namespace

std::string print_function(const PrimFunc& func) {
  DRAGON_CHECK(func.defined(), "print of an undefined function");
  Printer printer;
  FreeNames free;
  free.visit(func->body);
  printer.print_function(func, free);
  return printer.take();
}

std::string print_stmt(const Stmt& stmt) {
  Printer printer;
  FreeNames free;
  free.visit(stmt);
  printer.reserve_free_names(free);
  printer.visit(stmt);
  return printer.take();
}

std::string print_expr(const Expr& expr) {
  Printer printer;
  FreeNames free;
  free.visit(expr);
  printer.reserve_free_names(free);
  return printer.visit(expr);
}

}  // namespace dragon::ir
