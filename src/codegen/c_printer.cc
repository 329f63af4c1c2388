// The C-like printer base: expressions with the IR's exact semantics (integer floordiv and
// floormod through helpers, select as ?:, casts that saturate, 16-bit floats computed in
// float and rounded back after every operation), statements and names. Not target code:
// the emitters supply types, conversions, loops and allocations.
#include "dragon/codegen/c_printer.h"

#include <cmath>
#include <cstdio>

#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::codegen {
namespace {

// Words a generated identifier must not be: C++ keywords and names the preludes define.
constexpr std::string_view kReserved[] = {
    "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "new", "delete", "register",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "this", "true", "typedef", "union",
    "unsigned", "void", "volatile", "while", "class", "template", "typename", "namespace", "using", "operator",
    "private", "public", "protected", "virtual", "friend", "throw", "try", "catch", "asm", "and", "or", "not",
    "xor", "min", "max", "abs", "exp", "log", "sqrt", "pow", "floor", "ceil", "round", "trunc", "sin", "cos",
    "tanh", "erf", "std", "args", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "main"};

std::string sanitize(std::string_view hint) {
  std::string name;
  for (char c : hint) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    name += ok ? c : '_';
  }
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name = "v" + name;
  // Leading underscores and the dragon_ prefix belong to the implementation and preludes.
  if (name[0] == '_' || name.rfind("dragon_", 0) == 0) name = "v" + name;
  return name;
}

}  // namespace

NameTable::NameTable() {
  for (std::string_view word : kReserved) used_.insert(std::string(word));
}

std::string NameTable::get(const void* key, std::string_view hint) {
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  std::string name = fresh(hint);
  names_.emplace(key, name);
  return name;
}

std::string NameTable::fresh(std::string_view hint) {
  std::string base = sanitize(hint);
  std::string name = base;
  for (int suffix = 1; used_.count(name) != 0; ++suffix) name = base + "_" + std::to_string(suffix);
  used_.insert(name);
  return name;
}

std::string_view common_prelude() {
  return R"(// Index arithmetic and conversions with the IR's semantics.
template <typename T> DRAGON_INLINE T dragon_floordiv(T a, T b) {
  T q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(q - 1) : q;
}
template <typename T> DRAGON_INLINE T dragon_floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;
}
DRAGON_INLINE float dragon_floordiv(float a, float b) { return floorf(a / b); }
DRAGON_INLINE double dragon_floordiv(double a, double b) { return floor(a / b); }
DRAGON_INLINE float dragon_floormod(float a, float b) { return a - floorf(a / b) * b; }
DRAGON_INLINE double dragon_floormod(double a, double b) { return a - floor(a / b) * b; }
template <typename T> DRAGON_INLINE T dragon_min(T a, T b) { return b < a ? b : a; }
template <typename T> DRAGON_INLINE T dragon_max(T a, T b) { return a < b ? b : a; }
// |x| wraps: the most negative value is its own absolute value.
template <typename T> DRAGON_INLINE T dragon_iabs(T a) { return a < 0 ? (T)(0ULL - (unsigned long long)a) : a; }
// float -> int truncates toward zero and saturates; NaN gives 0.
template <typename F> DRAGON_INLINE int8_t dragon_f2i8(F x) {
  return x != x ? (int8_t)0 : x <= (F)-128 ? (int8_t)-128 : x >= (F)128 ? (int8_t)127 : (int8_t)x;
}
template <typename F> DRAGON_INLINE int32_t dragon_f2i32(F x) {
  return x != x ? 0 : x <= (F)-2147483648.0 ? (int32_t)(-2147483647 - 1) : x >= (F)2147483648.0 ? (int32_t)2147483647 : (int32_t)x;
}
template <typename F> DRAGON_INLINE int64_t dragon_f2i64(F x) {
  return x != x ? 0
       : x <= (F)-9223372036854775808.0 ? (int64_t)(-9223372036854775807LL - 1)
       : x >= (F)9223372036854775808.0 ? (int64_t)9223372036854775807LL : (int64_t)x;
}
)";
}

std::string CPrinter::type_name(ir::DataType dtype) const {
  DRAGON_CHECK(dtype.is_scalar(), "vector type {} in the flat form", ir::to_string(dtype));
  if (dtype.is_bool()) return "bool";
  if (dtype.is_int()) return "int" + std::to_string(dtype.bits()) + "_t";
  if (dtype == ir::DataType::f32()) return "float";
  if (dtype == ir::DataType::f64()) return "double";
  if (dtype == ir::DataType::f16()) return f16_type();
  if (dtype == ir::DataType::bf16()) return bf16_type();
  DRAGON_UNREACHABLE("no C type for {}", ir::to_string(dtype));
}

void CPrinter::line(std::string_view text) {
  for (int i = 0; i < indent_; ++i) out_ << "  ";
  out_ << text << '\n';
}

void CPrinter::open(std::string_view header) {
  line(std::string(header) + " {");
  ++indent_;
}

void CPrinter::close(std::string_view trailer) {
  --indent_;
  line(trailer);
}

std::string CPrinter::flat_index(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) {
  if (indices.size() != 1) {
    throw InternalError(fmt::format("codegen takes the flat form (lower.h): buffer {} is indexed by {} indices",
                                    buffer->name, indices.size()));
  }
  return print_expr(indices[0]);
}

std::string CPrinter::index_text(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) {
  auto it = index_override_.find(&indices);
  return it != index_override_.end() ? it->second : flat_index(buffer, indices);
}

namespace {

// The loads of a stored value (not those inside other loads' indices).
struct ValueLoads : ir::ExprVisitor {
  std::vector<const ir::BufferLoadNode*> loads;
  void visit_(const ir::BufferLoadNode* op) override { loads.push_back(op); }
};

// Whether an index reads memory or calls something: such an index stays under its guard.
struct ReadsOrCalls : ir::ExprVisitor {
  bool found = false;
  void visit_(const ir::BufferLoadNode*) override { found = true; }
  void visit_(const ir::CallNode*) override { found = true; }
};

bool worth_hoisting(const std::vector<ir::Expr>& indices) {
  if (indices.size() != 1 || indices[0].as<ir::IntImmNode>() != nullptr || indices[0].as<ir::VarNode>() != nullptr) {
    return false;
  }
  ReadsOrCalls scan;
  scan.visit(indices[0]);
  return !scan.found;
}

}  // namespace

bool CPrinter::hoist_guarded_indices(const ir::IfThenElseNode* op) {
  const auto* store = op->then_case.as<ir::BufferStoreNode>();
  if (op->else_case.defined() || store == nullptr) return false;
  // Copies and computations, not guarded initializations: a value that reads no memory has
  // no index worth sharing with the neighbours.
  ValueLoads value;
  value.visit(store->value);
  std::vector<std::pair<const ir::Buffer*, const std::vector<ir::Expr>*>> hoisted;
  for (const ir::BufferLoadNode* load : value.loads) {
    if (load_override_.count(load) == 0 && worth_hoisting(load->indices)) hoisted.emplace_back(&load->buffer, &load->indices);
  }
  if (hoisted.empty()) return false;
  if (worth_hoisting(store->indices)) hoisted.emplace_back(&store->buffer, &store->indices);
  line("{");
  ++indent_;
  for (const auto& [buffer, indices] : hoisted) {
    if (index_override_.count(indices) != 0) continue;
    const std::string name = names_.fresh("dragon_index");
    line(fmt::format("const auto {} = {};", name, flat_index(*buffer, *indices)));
    index_override_.emplace(indices, name);
  }
  return true;
}

void CPrinter::bind_loop(const ir::ForNode* op) {
  auto min = ir::as_const_int(op->min);
  auto extent = ir::as_const_int(op->extent);
  if (min && extent && *extent > 0) analyzer_.bind(op->loop_var, *min, *extent);
}

void CPrinter::print_loop_header(const ir::ForNode* op) {
  std::string v = var_name(op->loop_var);
  std::string end = ir::is_const_int(op->min, 0) ? print_expr(op->extent)
                                                  : print_expr(ir::simplify(op->min + op->extent));
  open(fmt::format("for ({} {} = {}; {} < {}; ++{})", type_name(op->loop_var.dtype()), v, print_expr(op->min), v,
                   end, v));
}

void CPrinter::print_for(const ir::ForNode* op) {
  bind_loop(op);
  std::string pragma = loop_pragma(op);
  if (!pragma.empty()) line(pragma);
  print_loop_header(op);
  print_stmt(op->body);
  close();
}

// ---- Expressions -----------------------------------------------------------------------

std::string CPrinter::visit_(const ir::IntImmNode* op) {
  ir::DataType t = op->dtype;
  if (t.is_bool()) return op->value ? "true" : "false";
  if (t.bits() == 64) {
    if (op->value == INT64_MIN) return "((int64_t)(-9223372036854775807LL - 1))";
    return fmt::format("((int64_t){}LL)", op->value);
  }
  std::string literal = op->value == INT32_MIN ? "(-2147483647 - 1)"
                        : op->value < 0        ? fmt::format("({})", op->value)
                                               : std::to_string(op->value);
  if (t.bits() == 32) return literal;
  return fmt::format("(({}){})", type_name(t), literal);
}

std::string CPrinter::visit_(const ir::FloatImmNode* op) {
  ir::DataType t = op->dtype;
  bool single = t.bits() <= 32;  // f16 and bf16 immediates are f32 literals rounded exactly
  std::string suffix = single ? "F32" : "F64";
  std::string literal;
  if (std::isnan(op->value)) {
    literal = "DRAGON_NAN_" + suffix;
  } else if (std::isinf(op->value)) {
    literal = (op->value < 0 ? "(-DRAGON_INF_" : "(DRAGON_INF_") + suffix + ")";
  } else {
    char text[64];
    std::snprintf(text, sizeof(text), "%a%s", op->value, single ? "f" : "");
    literal = op->value < 0 || std::signbit(op->value) ? fmt::format("({})", text) : text;
  }
  if (is_half(t)) return float_to_half(literal, ir::DataType::f32(), t);
  return literal;
}

std::string CPrinter::visit_(const ir::VarNode* op) {
  auto it = var_override_.find(op);
  if (it != var_override_.end()) return it->second;
  return var_name(op);
}

std::string CPrinter::widened(const ir::Expr& e) {
  std::string text = print_expr(e);
  return is_half(e.dtype()) ? half_to_float(text, e.dtype()) : text;
}

std::string CPrinter::arith(std::string_view op, const ir::Expr& a, const ir::Expr& b, ir::DataType dtype) {
  if (is_half(dtype)) {
    return float_to_half(fmt::format("({} {} {})", widened(a), op, widened(b)), ir::DataType::f32(), dtype);
  }
  std::string text = fmt::format("({} {} {})", print_expr(a), op, print_expr(b));
  // C promotes narrow integers to int; the IR wraps in the operand's width.
  if (dtype.is_int() && dtype.bits() < 32) return fmt::format("(({}){})", type_name(dtype), text);
  return text;
}

std::string CPrinter::visit_(const ir::ModNode* op) {
  if (op->dtype.is_int()) return arith("%", op->a, op->b, op->dtype);
  bool f64 = op->dtype == ir::DataType::f64();
  std::string text = fmt::format("fmod{}({}, {})", f64 ? "" : "f", widened(op->a), widened(op->b));
  return is_half(op->dtype) ? float_to_half(text, ir::DataType::f32(), op->dtype) : text;
}

bool CPrinter::is_plain_division(const ir::Expr& a, const ir::Expr& b) const {
  // floordiv and floormod equal C's / and % when the dividend is non-negative and the
  // divisor a positive constant: the common case of index arithmetic, printed plainly.
  if (!a.dtype().is_int()) return false;
  auto divisor = ir::as_const_int(b);
  return divisor && *divisor > 0 && analyzer_.can_prove(a >= ir::make_zero(a.dtype()));
}

std::string CPrinter::visit_(const ir::FloorDivNode* op) {
  if (is_plain_division(op->a, op->b)) return arith("/", op->a, op->b, op->dtype);
  std::string text = fmt::format("dragon_floordiv({}, {})", widened(op->a), widened(op->b));
  return is_half(op->dtype) ? float_to_half(text, ir::DataType::f32(), op->dtype) : text;
}

std::string CPrinter::visit_(const ir::FloorModNode* op) {
  if (is_plain_division(op->a, op->b)) return arith("%", op->a, op->b, op->dtype);
  std::string text = fmt::format("dragon_floormod({}, {})", widened(op->a), widened(op->b));
  return is_half(op->dtype) ? float_to_half(text, ir::DataType::f32(), op->dtype) : text;
}

std::string CPrinter::extremum(std::string_view which, const ir::Expr& a, const ir::Expr& b, ir::DataType dtype) {
  if (!dtype.is_float()) return fmt::format("dragon_{}({}, {})", which, print_expr(a), print_expr(b));
  std::string text = fmt::format("{}({}, {})", float_extremum(which, dtype == ir::DataType::f64()), widened(a), widened(b));
  return is_half(dtype) ? float_to_half(text, ir::DataType::f32(), dtype) : text;
}

std::string CPrinter::float_extremum(std::string_view which, bool f64) const {
  // fminf / fmaxf: a NaN operand yields the other operand, as the interpreter does.
  return fmt::format("f{}{}", which, f64 ? "" : "f");
}

std::string CPrinter::compare(std::string_view op, const ir::Expr& a, const ir::Expr& b) {
  return fmt::format("({} {} {})", widened(a), op, widened(b));
}

std::string CPrinter::visit_(const ir::AndNode* op) {
  return fmt::format("({} && {})", print_expr(op->a), print_expr(op->b));
}

std::string CPrinter::visit_(const ir::OrNode* op) {
  return fmt::format("({} || {})", print_expr(op->a), print_expr(op->b));
}

std::string CPrinter::visit_(const ir::NotNode* op) { return fmt::format("(!{})", print_expr(op->a)); }

std::string CPrinter::visit_(const ir::SelectNode* op) {
  return fmt::format("({} ? {} : {})", print_expr(op->condition), print_expr(op->true_value),
                     print_expr(op->false_value));
}

std::string CPrinter::convert(const std::string& value, ir::DataType from, ir::DataType to) const {
  if (from == to) return value;
  if (to.is_bool()) {
    if (is_half(from)) return fmt::format("({} != 0.0f)", half_to_float(value, from));
    return fmt::format("({} != 0)", value);
  }
  if (from.is_bool()) {
    if (is_half(to)) return float_to_half(fmt::format("({} ? 1.0f : 0.0f)", value), ir::DataType::f32(), to);
    return fmt::format("(({}){})", type_name(to), value);
  }
  std::string v = value;
  if (is_half(from)) {
    v = half_to_float(v, from);
    from = ir::DataType::f32();
    if (to == from) return v;
  }
  if (is_half(to)) {
    // Integers go through double (exact up to 2^53) so the value is rounded once.
    if (from.is_int()) return float_to_half(fmt::format("((double){})", v), ir::DataType::f64(), to);
    return float_to_half(v, from, to);
  }
  if (from.is_float() && to.is_int()) return fmt::format("dragon_f2i{}({})", to.bits(), v);
  return fmt::format("(({}){})", type_name(to), v);
}

std::string CPrinter::visit_(const ir::CastNode* op) {
  return convert(print_expr(op->value), op->value.dtype(), op->dtype);
}

std::string CPrinter::math_call(ir::Intrinsic op, ir::DataType dtype, const std::vector<std::string>& args) const {
  bool f32 = dtype == ir::DataType::f32();
  std::string f = f32 ? "f" : "";
  auto call = [&](std::string_view name) {
    std::string text = fmt::format("{}{}({}", name, f, args[0]);
    for (size_t i = 1; i < args.size(); ++i) text += ", " + args[i];
    return text + ")";
  };
  switch (op) {
    case ir::Intrinsic::Exp: return call("exp");
    case ir::Intrinsic::Exp2: return call("exp2");
    case ir::Intrinsic::Expm1: return call("expm1");
    case ir::Intrinsic::Log: return call("log");
    case ir::Intrinsic::Log2: return call("log2");
    case ir::Intrinsic::Log1p: return call("log1p");
    case ir::Intrinsic::Sqrt: return call("sqrt");
    case ir::Intrinsic::Rsqrt: return fmt::format("({} / sqrt{}({}))", f32 ? "1.0f" : "1.0", f, args[0]);
    case ir::Intrinsic::Sin: return call("sin");
    case ir::Intrinsic::Cos: return call("cos");
    case ir::Intrinsic::Tanh: return call("tanh");
    case ir::Intrinsic::Erf: return call("erf");
    case ir::Intrinsic::Floor: return call("floor");
    case ir::Intrinsic::Ceil: return call("ceil");
    case ir::Intrinsic::Round: return call("rint");  // half to even in the default rounding mode
    case ir::Intrinsic::Trunc: return call("trunc");
    case ir::Intrinsic::Pow: return call("pow");
    case ir::Intrinsic::Abs: return call("fabs");
    case ir::Intrinsic::IsNan: return fmt::format("isnan({})", args[0]);
    case ir::Intrinsic::IsInf: return fmt::format("isinf({})", args[0]);
    case ir::Intrinsic::SyncThreads:
    case ir::Intrinsic::AsyncCommitGroup:
    case ir::Intrinsic::AsyncWaitGroup: break;
  }
  DRAGON_UNREACHABLE("intrinsic {} has no value", ir::intrinsic_name(op));
}

std::string CPrinter::visit_(const ir::CallNode* op) {
  DRAGON_CHECK(!ir::intrinsic_is_effect(op->op), "effect intrinsic {} used as a value", ir::intrinsic_name(op->op));
  if (op->op == ir::Intrinsic::Abs && op->dtype.is_int()) return fmt::format("dragon_iabs({})", print_expr(op->args[0]));
  std::vector<std::string> args;
  for (const ir::Expr& arg : op->args) args.push_back(widened(arg));
  ir::DataType operand = op->args.empty() ? op->dtype : op->args[0].dtype();
  // 16-bit floats: computed in float and rounded once to the result type.
  ir::DataType computed = is_half(operand) ? ir::DataType::f32() : operand;
  std::string text = math_call(op->op, computed, args);
  return is_half(op->dtype) ? float_to_half(text, ir::DataType::f32(), op->dtype) : text;
}

std::string CPrinter::visit_(const ir::BufferLoadNode* op) {
  auto it = load_override_.find(op);
  if (it != load_override_.end()) return it->second;
  return fmt::format("{}[{}]", buffer_name(op->buffer), index_text(op->buffer, op->indices));
}

// ---- Statements ------------------------------------------------------------------------

void CPrinter::visit_(const ir::BlockNode* op) {
  throw InternalError(fmt::format("codegen takes the flat form (lower.h); found block {}", op->name));
}

void CPrinter::visit_(const ir::BlockRealizeNode* op) { visit_(op->block.get()); }

void CPrinter::visit_(const ir::SeqStmtNode* op) {
  for (const ir::Stmt& s : op->seq) print_stmt(s);
}

void CPrinter::visit_(const ir::IfThenElseNode* op) {
  const bool hoisted = hoist_guarded_indices(op);
  open(fmt::format("if ({})", print_expr(op->condition)));
  print_stmt(op->then_case);
  if (op->else_case.defined()) {
    --indent_;
    open("} else");
    print_stmt(op->else_case);
  }
  close();
  if (hoisted) end_hoisted_indices();
}

void CPrinter::end_hoisted_indices() {
  index_override_.clear();
  close();
}

void CPrinter::visit_(const ir::BufferStoreNode* op) {
  line(fmt::format("{}[{}] = {};", buffer_name(op->buffer), index_text(op->buffer, op->indices),
                   print_expr(op->value)));
}

void CPrinter::print_effect(const ir::CallNode* call) {
  throw InternalError(fmt::format("intrinsic {} has no meaning on this target", ir::intrinsic_name(call->op)));
}

void CPrinter::visit_(const ir::EvaluateNode* op) {
  if (const auto* call = op->value.as<ir::CallNode>(); call && ir::intrinsic_is_effect(call->op)) {
    print_effect(call);
    return;
  }
  line(fmt::format("(void){};", print_expr(op->value)));
}

}  // namespace dragon::codegen
