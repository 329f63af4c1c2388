// Expression code of the interpreter: one small node class per (operation, type) pair so
// that running is a chain of virtual calls with no type dispatch, and the compiler that
// picks them. Math intrinsics live in compile_call.cc, casts in compile_cast.cc.
#include <cmath>
#include <limits>

#include "compiled_code.h"
#include "dragon/ir/functor.h"
#include "dragon/support/error.h"
#include "expr_code.h"

namespace dragon::interp::detail {
namespace {

// ---- leaves ---------------------------------------------------------------------------

class FloatConst final : public ExprCode {
 public:
  FloatConst(ir::DataType dtype, double value) : ExprCode(dtype), value_(value) {}
  double eval_float(Frame&) const override { return value_; }

 private:
  double value_;
};

class IntConst final : public ExprCode {
 public:
  IntConst(ir::DataType dtype, int64_t value) : ExprCode(dtype), value_(value) {}
  int64_t eval_int(Frame&) const override { return value_; }
  int64_t value() const { return value_; }

 private:
  int64_t value_;
};

class VarRef final : public ExprCode {
 public:
  VarRef(ir::DataType dtype, int slot) : ExprCode(dtype), slot_(slot) {}
  int64_t eval_int(Frame& frame) const override { return frame.vars[slot_]; }
  int slot() const { return slot_; }

 private:
  int slot_;
};

// ---- arithmetic -----------------------------------------------------------------------

template <typename Op, typename Format>
class FloatBinary final : public ExprCode {
 public:
  FloatBinary(ir::DataType dtype, ExprPtr a, ExprPtr b) : ExprCode(dtype), a_(std::move(a)), b_(std::move(b)) {}
  double eval_float(Frame& frame) const override {
    using T = typename Format::Compute;
    T a = static_cast<T>(a_->eval_float(frame));
    T b = static_cast<T>(b_->eval_float(frame));
    return Format::round(static_cast<double>(Op::apply(a, b)));
  }

 private:
  ExprPtr a_, b_;
};

// Integer operations compute on uint64 (wrapping, no undefined behaviour) and wrap to the
// type's width.
struct IntAdd {
  static int64_t apply(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
};
struct IntSub {
  static int64_t apply(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  }
};
struct IntMul {
  static int64_t apply(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }
};
struct IntMin {
  static int64_t apply(int64_t a, int64_t b) { return a < b ? a : b; }
};
struct IntMax {
  static int64_t apply(int64_t a, int64_t b) { return a > b ? a : b; }
};

template <typename Op, int Bits>
class IntBinary final : public ExprCode {
 public:
  IntBinary(ir::DataType dtype, ExprPtr a, ExprPtr b) : ExprCode(dtype), a_(std::move(a)), b_(std::move(b)) {}
  int64_t eval_int(Frame& frame) const override {
    return wrap_int<Bits>(Op::apply(a_->eval_int(frame), b_->eval_int(frame)));
  }

 private:
  ExprPtr a_, b_;
};

enum class DivKind : uint8_t { kTruncDiv, kTruncMod, kFloorDiv, kFloorMod };

// Division needs the statement context: dividing by zero is the program's error.
template <DivKind Kind, int Bits>
class IntDivide final : public ExprCode {
 public:
  IntDivide(ir::DataType dtype, ExprPtr a, ExprPtr b, Context context)
      : ExprCode(dtype), a_(std::move(a)), b_(std::move(b)), context_(std::move(context)) {}
  int64_t eval_int(Frame& frame) const override {
    int64_t a = a_->eval_int(frame);
    int64_t b = b_->eval_int(frame);
    if (b == 0) [[unlikely]] {
      throw UserError(fmt::format("integer division by zero ({} of {} by 0) in {}", name(), a, *context_));
    }
    // INT64_MIN / -1 overflows in C++; in two's complement it wraps to itself, remainder 0.
    if (b == -1) {
      if (Kind == DivKind::kTruncDiv || Kind == DivKind::kFloorDiv) return wrap_int<Bits>(IntSub::apply(0, a));
      return 0;
    }
    int64_t q = a / b, r = a % b;
    switch (Kind) {
      case DivKind::kTruncDiv: return wrap_int<Bits>(q);
      case DivKind::kTruncMod: return r;
      case DivKind::kFloorDiv: return wrap_int<Bits>(r != 0 && ((r < 0) != (b < 0)) ? q - 1 : q);
      case DivKind::kFloorMod: return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    return 0;
  }

 private:
  static const char* name() {
    switch (Kind) {
      case DivKind::kTruncDiv: return "div";
      case DivKind::kTruncMod: return "mod";
      case DivKind::kFloorDiv: return "floordiv";
      case DivKind::kFloorMod: return "floormod";
    }
    return "";
  }
  ExprPtr a_, b_;
  Context context_;
};

// ---- comparisons and logic ------------------------------------------------------------

struct EqOp {
  template <typename T>
  static bool apply(T a, T b) {
    return a == b;
  }
};
struct NeOp {
  template <typename T>
  static bool apply(T a, T b) {
    return a != b;
  }
};
struct LtOp {
  template <typename T>
  static bool apply(T a, T b) {
    return a < b;
  }
};
struct LeOp {
  template <typename T>
  static bool apply(T a, T b) {
    return a <= b;
  }
};
struct GtOp {
  template <typename T>
  static bool apply(T a, T b) {
    return a > b;
  }
};
struct GeOp {
  template <typename T>
  static bool apply(T a, T b) {
    return a >= b;
  }
};

// Operands already hold values of their type, so comparing the doubles is exact; NaN
// compares false except with !=.
template <typename Op>
class FloatCompare final : public ExprCode {
 public:
  FloatCompare(ExprPtr a, ExprPtr b) : ExprCode(ir::DataType::boolean()), a_(std::move(a)), b_(std::move(b)) {}
  int64_t eval_int(Frame& frame) const override { return Op::apply(a_->eval_float(frame), b_->eval_float(frame)); }

 private:
  ExprPtr a_, b_;
};

template <typename Op>
class IntCompare final : public ExprCode {
 public:
  IntCompare(ExprPtr a, ExprPtr b) : ExprCode(ir::DataType::boolean()), a_(std::move(a)), b_(std::move(b)) {}
  int64_t eval_int(Frame& frame) const override { return Op::apply(a_->eval_int(frame), b_->eval_int(frame)); }

 private:
  ExprPtr a_, b_;
};

class AndCode final : public ExprCode {
 public:
  AndCode(ExprPtr a, ExprPtr b) : ExprCode(ir::DataType::boolean()), a_(std::move(a)), b_(std::move(b)) {}
  int64_t eval_int(Frame& frame) const override { return a_->eval_int(frame) != 0 && b_->eval_int(frame) != 0; }

 private:
  ExprPtr a_, b_;
};

class OrCode final : public ExprCode {
 public:
  OrCode(ExprPtr a, ExprPtr b) : ExprCode(ir::DataType::boolean()), a_(std::move(a)), b_(std::move(b)) {}
  int64_t eval_int(Frame& frame) const override { return a_->eval_int(frame) != 0 || b_->eval_int(frame) != 0; }

 private:
  ExprPtr a_, b_;
};

class NotCode final : public ExprCode {
 public:
  explicit NotCode(ExprPtr a) : ExprCode(ir::DataType::boolean()), a_(std::move(a)) {}
  int64_t eval_int(Frame& frame) const override { return a_->eval_int(frame) == 0; }

 private:
  ExprPtr a_;
};

// Only the chosen operand is evaluated (a guarded load may be out of bounds otherwise).
class SelectCode final : public ExprCode {
 public:
  SelectCode(ir::DataType dtype, ExprPtr c, ExprPtr t, ExprPtr f)
      : ExprCode(dtype), c_(std::move(c)), t_(std::move(t)), f_(std::move(f)) {}
  double eval_float(Frame& frame) const override {
    return c_->eval_int(frame) != 0 ? t_->eval_float(frame) : f_->eval_float(frame);
  }
  int64_t eval_int(Frame& frame) const override {
    return c_->eval_int(frame) != 0 ? t_->eval_int(frame) : f_->eval_int(frame);
  }

 private:
  ExprPtr c_, t_, f_;
};

// ---- loads ----------------------------------------------------------------------------

template <typename Element>
class Load final : public ExprCode {
 public:
  Load(ir::DataType dtype, Access access) : ExprCode(dtype), access_(std::move(access)) {}
  double eval_float(Frame& frame) const override {
    int64_t flat = access_.offset(frame);
    return Element::read_float(frame.buffers[access_.slot()], flat);
  }
  int64_t eval_int(Frame& frame) const override {
    int64_t flat = access_.offset(frame);
    return Element::read_int(frame.buffers[access_.slot()], flat);
  }

 private:
  Access access_;
};

// ---- the compiler ---------------------------------------------------------------------

template <template <typename, typename> class Node, typename Op, typename... Args>
ExprPtr make_float_node(ir::DataType dtype, Args&&... args) {
  switch (float_format_of(dtype)) {
    case FloatFormat::kF64: return std::make_unique<Node<Op, F64Format>>(dtype, std::forward<Args>(args)...);
    case FloatFormat::kF32: return std::make_unique<Node<Op, F32Format>>(dtype, std::forward<Args>(args)...);
    case FloatFormat::kF16: return std::make_unique<Node<Op, F16Format>>(dtype, std::forward<Args>(args)...);
    case FloatFormat::kBF16: return std::make_unique<Node<Op, BF16Format>>(dtype, std::forward<Args>(args)...);
  }
  DRAGON_UNREACHABLE("float format");
}

template <typename Op>
ExprPtr make_int_binary(ir::DataType dtype, ExprPtr a, ExprPtr b) {
  switch (dtype.bits()) {
    case 8: return std::make_unique<IntBinary<Op, 8>>(dtype, std::move(a), std::move(b));
    case 16: return std::make_unique<IntBinary<Op, 16>>(dtype, std::move(a), std::move(b));
    case 32: return std::make_unique<IntBinary<Op, 32>>(dtype, std::move(a), std::move(b));
    case 64: return std::make_unique<IntBinary<Op, 64>>(dtype, std::move(a), std::move(b));
  }
  DRAGON_UNREACHABLE("int of {} bits", dtype.bits());
}

template <DivKind Kind>
ExprPtr make_int_divide(ir::DataType dtype, ExprPtr a, ExprPtr b, const Context& context) {
  switch (dtype.bits()) {
    case 8: return std::make_unique<IntDivide<Kind, 8>>(dtype, std::move(a), std::move(b), context);
    case 16: return std::make_unique<IntDivide<Kind, 16>>(dtype, std::move(a), std::move(b), context);
    case 32: return std::make_unique<IntDivide<Kind, 32>>(dtype, std::move(a), std::move(b), context);
    case 64: return std::make_unique<IntDivide<Kind, 64>>(dtype, std::move(a), std::move(b), context);
  }
  DRAGON_UNREACHABLE("int of {} bits", dtype.bits());
}

class ExprCompiler final : public ir::ExprFunctor<ExprPtr> {
 public:
  explicit ExprCompiler(Compiler& compiler) : compiler_(compiler) {}

  ExprPtr compile(const ir::Expr& e) {
    DRAGON_CHECK(e.defined(), "compiling an undefined expression");
    DRAGON_CHECK(e.dtype().is_scalar(), "the interpreter does not run vector expressions ({} of type {})",
                 ir::node_kind_name(e.kind()), ir::to_string(e.dtype()));
    return visit(e);
  }

 protected:
  ExprPtr visit_(const ir::IntImmNode* op) override { return std::make_unique<IntConst>(op->dtype, op->value); }
  ExprPtr visit_(const ir::FloatImmNode* op) override {
    return std::make_unique<FloatConst>(op->dtype, round_to_format(float_format_of(op->dtype), op->value));
  }
  ExprPtr visit_(const ir::VarNode* op) override {
    if (!op->dtype.is_int() && !op->dtype.is_bool()) {
      throw UserError(fmt::format("variable {} of type {} is not an integer in {}", op->name, ir::to_string(op->dtype),
                                  *compiler_.context()));
    }
    return std::make_unique<VarRef>(op->dtype, compiler_.var_slot(op));
  }

  template <typename FloatOp, typename IntOp, typename NodeT>
  ExprPtr arithmetic(const NodeT* op) {
    ExprPtr a = compile(op->a), b = compile(op->b);
    if (op->dtype.is_float()) return make_float_node<FloatBinary, FloatOp>(op->dtype, std::move(a), std::move(b));
    require_int(op->dtype, ir::node_kind_name(NodeT::kKind));
    if (ExprPtr folded = fold_affine(NodeT::kKind, op->dtype, a, b)) return folded;
    return make_int_binary<IntOp>(op->dtype, std::move(a), std::move(b));
  }
  template <typename FloatOp, DivKind Kind, typename NodeT>
  ExprPtr division(const NodeT* op) {
    ExprPtr a = compile(op->a), b = compile(op->b);
    if (op->dtype.is_float()) return make_float_node<FloatBinary, FloatOp>(op->dtype, std::move(a), std::move(b));
    require_int(op->dtype, ir::node_kind_name(NodeT::kKind));
    return make_int_divide<Kind>(op->dtype, std::move(a), std::move(b), compiler_.context());
  }
  template <typename Op, typename NodeT>
  ExprPtr comparison(const NodeT* op) {
    ExprPtr a = compile(op->a), b = compile(op->b);
    if (op->a.dtype().is_float()) return std::make_unique<FloatCompare<Op>>(std::move(a), std::move(b));
    return std::make_unique<IntCompare<Op>>(std::move(a), std::move(b));
  }
  // Min and max are also defined on bool (as on 0/1).
  template <typename FloatOp, typename IntOp, typename NodeT>
  ExprPtr extremum(const NodeT* op) {
    ExprPtr a = compile(op->a), b = compile(op->b);
    if (op->dtype.is_float()) return make_float_node<FloatBinary, FloatOp>(op->dtype, std::move(a), std::move(b));
    if (op->dtype.is_bool()) return std::make_unique<IntBinary<IntOp, 64>>(op->dtype, std::move(a), std::move(b));
    return make_int_binary<IntOp>(op->dtype, std::move(a), std::move(b));
  }

  ExprPtr visit_(const ir::AddNode* op) override { return arithmetic<AddOp, IntAdd>(op); }
  ExprPtr visit_(const ir::SubNode* op) override { return arithmetic<SubOp, IntSub>(op); }
  ExprPtr visit_(const ir::MulNode* op) override { return arithmetic<MulOp, IntMul>(op); }
  ExprPtr visit_(const ir::DivNode* op) override { return division<DivOp, DivKind::kTruncDiv>(op); }
  ExprPtr visit_(const ir::ModNode* op) override { return division<ModOp, DivKind::kTruncMod>(op); }
  ExprPtr visit_(const ir::FloorDivNode* op) override { return division<FloorDivOp, DivKind::kFloorDiv>(op); }
  ExprPtr visit_(const ir::FloorModNode* op) override { return division<FloorModOp, DivKind::kFloorMod>(op); }
  ExprPtr visit_(const ir::MinNode* op) override { return extremum<MinOp, IntMin>(op); }
  ExprPtr visit_(const ir::MaxNode* op) override { return extremum<MaxOp, IntMax>(op); }
  ExprPtr visit_(const ir::EQNode* op) override { return comparison<EqOp>(op); }
  ExprPtr visit_(const ir::NENode* op) override { return comparison<NeOp>(op); }
  ExprPtr visit_(const ir::LTNode* op) override { return comparison<LtOp>(op); }
  ExprPtr visit_(const ir::LENode* op) override { return comparison<LeOp>(op); }
  ExprPtr visit_(const ir::GTNode* op) override { return comparison<GtOp>(op); }
  ExprPtr visit_(const ir::GENode* op) override { return comparison<GeOp>(op); }
  ExprPtr visit_(const ir::AndNode* op) override { return std::make_unique<AndCode>(compile(op->a), compile(op->b)); }
  ExprPtr visit_(const ir::OrNode* op) override { return std::make_unique<OrCode>(compile(op->a), compile(op->b)); }
  ExprPtr visit_(const ir::NotNode* op) override { return std::make_unique<NotCode>(compile(op->a)); }
  ExprPtr visit_(const ir::SelectNode* op) override {
    return std::make_unique<SelectCode>(op->dtype, compile(op->condition), compile(op->true_value),
                                        compile(op->false_value));
  }
  ExprPtr visit_(const ir::CastNode* op) override { return compile_cast(op->dtype, compile(op->value)); }
  ExprPtr visit_(const ir::CallNode* op) override {
    std::vector<ExprPtr> args;
    for (const ir::Expr& arg : op->args) args.push_back(compile(arg));
    return compile_call(op->op, op->dtype, std::move(args));
  }
  ExprPtr visit_(const ir::BufferLoadNode* op) override {
    std::vector<ExprPtr> indices;
    for (const ir::Expr& index : op->indices) indices.push_back(compile_index(index));
    Access access(op->buffer, compiler_.buffer_slot(op->buffer), std::move(indices), /*is_store=*/false,
                  compiler_.context());
    return make_element_node<Load>(op->buffer->dtype, op->buffer->dtype, std::move(access));
  }

 private:
  ExprPtr compile_index(const ir::Expr& index) {
    if (!index.dtype().is_int()) {
      throw UserError(fmt::format("a buffer index of type {} is not an integer in {}", ir::to_string(index.dtype()),
                                  *compiler_.context()));
    }
    return compile(index);
  }
  void require_int(ir::DataType dtype, std::string_view what) {
    if (!dtype.is_int()) {
      throw UserError(fmt::format("{} on {} values in {}", what, ir::to_string(dtype), *compiler_.context()));
    }
  }

  Compiler& compiler_;
};

}  // namespace

double ExprCode::eval_float(Frame&) const {
  DRAGON_UNREACHABLE("a {} expression evaluated as a float", ir::to_string(dtype_));
}
int64_t ExprCode::eval_int(Frame&) const {
  DRAGON_UNREACHABLE("a {} expression evaluated as an integer", ir::to_string(dtype_));
}

int var_slot_of(const ExprCode& code) {
  const auto* var = dynamic_cast<const VarRef*>(&code);
  return var ? var->slot() : -1;
}

std::optional<int64_t> const_int_of(const ExprCode& code) {
  const auto* constant = dynamic_cast<const IntConst*>(&code);
  return constant ? std::optional<int64_t>(constant->value()) : std::nullopt;
}

ExprPtr Compiler::expr(const ir::Expr& e) { return ExprCompiler(*this).compile(e); }

}  // namespace dragon::interp::detail
