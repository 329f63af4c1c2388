// Construction of expression nodes, with the type rules checked once here.
#include "dragon/ir/expr.h"

#include <cmath>

#include "dragon/support/error.h"
#include "dragon/support/half.h"

namespace dragon::ir {
namespace {

enum class IntrinsicKind { kFloat, kPred, kAny, kEffect };

IntrinsicKind intrinsic_kind(Intrinsic op) {
  switch (op) {
#define FLOAT IntrinsicKind::kFloat
#define PRED IntrinsicKind::kPred
#define ANY IntrinsicKind::kAny
#define EFFECT IntrinsicKind::kEffect
#define DRAGON_INTRINSIC(Name, spelling, arity, kind) \
  case Intrinsic::Name: return kind;
#include "dragon/ir/intrinsics.def"
#undef FLOAT
#undef PRED
#undef ANY
#undef EFFECT
  }
  DRAGON_UNREACHABLE("intrinsic {}", static_cast<int>(op));
}

double round_float_to(DataType dtype, double value) {
  switch (dtype.bits()) {
    case 64: return value;
    case 32: return round_to_f32(value);
    case 16: return dtype.code() == TypeCode::kBFloat ? round_to_bf16(value) : round_to_f16(value);
    default: DRAGON_UNREACHABLE("float type {}", to_string(dtype));
  }
}

}  // namespace

Expr::Expr(int value) : Expr(IntImmNode::make(DataType::i32(), value)) {}

Expr IntImmNode::make(DataType dtype, int64_t value) {
  DRAGON_CHECK(dtype.is_int() || dtype.is_bool(), "IntImm of type {}", to_string(dtype));
  DRAGON_CHECK(dtype.is_scalar(), "IntImm of vector type {}", to_string(dtype));
  DRAGON_CHECK(value >= int_min_value(dtype) && value <= int_max_value(dtype), "{} does not fit {}", value,
               to_string(dtype));
  return Expr(new IntImmNode(dtype, value));
}

Expr FloatImmNode::make(DataType dtype, double value) {
  DRAGON_CHECK(dtype.is_float() && dtype.is_scalar(), "FloatImm of type {}", to_string(dtype));
  return Expr(new FloatImmNode(dtype, round_float_to(dtype, value)));
}

Var::Var(std::string name, DataType dtype) : Expr(new VarNode(dtype, std::move(name))) {
  DRAGON_CHECK(dtype.is_scalar(), "variable {} of vector type", this->name());
}

template <typename Derived, NodeKind K>
Expr BinaryNode<Derived, K>::make(Expr a, Expr b) {
  DRAGON_CHECK(a.defined() && b.defined(), "{} of an undefined operand", node_kind_name(K));
  DRAGON_CHECK(a.dtype() == b.dtype(), "{} of {} and {}", node_kind_name(K), to_string(a.dtype()),
               to_string(b.dtype()));
  DataType type = a.dtype();
  switch (K) {
    case NodeKind::EQ:
    case NodeKind::NE:
    case NodeKind::LT:
    case NodeKind::LE:
    case NodeKind::GT:
    case NodeKind::GE:
      return Expr(new Derived(DataType::boolean().with_lanes(type.lanes()), std::move(a), std::move(b)));
    case NodeKind::And:
    case NodeKind::Or:
      DRAGON_CHECK(type.is_bool(), "{} of {} operands", node_kind_name(K), to_string(type));
      break;
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod:
    case NodeKind::Mod:
      DRAGON_CHECK(type.is_int(), "{} of {} operands", node_kind_name(K), to_string(type));
      break;
    default:
      DRAGON_CHECK(!type.is_bool(), "{} of bool operands", node_kind_name(K));
      break;
  }
  return Expr(new Derived(type, std::move(a), std::move(b)));
}

#define DRAGON_BINARY_NODE(Name) template struct BinaryNode<Name##Node, NodeKind::Name>;
#include "dragon/ir/nodes.def"

Expr NotNode::make(Expr a) {
  DRAGON_CHECK(a.defined() && a.dtype().is_bool(), "Not of a non-bool operand");
  return Expr(new NotNode(std::move(a)));
}

Expr SelectNode::make(Expr condition, Expr true_value, Expr false_value) {
  DRAGON_CHECK(condition.defined() && true_value.defined() && false_value.defined(), "Select of undefined operands");
  DRAGON_CHECK(condition.dtype().is_bool(), "Select condition of type {}", to_string(condition.dtype()));
  DRAGON_CHECK(true_value.dtype() == false_value.dtype(), "Select of {} and {}", to_string(true_value.dtype()),
               to_string(false_value.dtype()));
  return Expr(new SelectNode(std::move(condition), std::move(true_value), std::move(false_value)));
}

Expr CastNode::make(DataType dtype, Expr value) {
  DRAGON_CHECK(value.defined(), "Cast of an undefined operand");
  DRAGON_CHECK(dtype.lanes() == value.dtype().lanes(), "Cast from {} to {} changes lanes", to_string(value.dtype()),
               to_string(dtype));
  return Expr(new CastNode(dtype, std::move(value)));
}

Expr CallNode::make(Intrinsic op, std::vector<Expr> args) {
  DRAGON_CHECK(static_cast<int>(args.size()) == intrinsic_arity(op), "{} takes {} arguments, got {}",
               intrinsic_name(op), intrinsic_arity(op), args.size());
  // No value: typed i32 only so that every Expr has a type; nothing reads it. Its
  // arguments (async_wait_group's count) are integer constants.
  if (intrinsic_kind(op) == IntrinsicKind::kEffect) {
    for (const Expr& arg : args) {
      DRAGON_CHECK(arg.defined() && arg.as<IntImmNode>() != nullptr, "{} takes integer constants", intrinsic_name(op));
    }
    return Expr(new CallNode(DataType::i32(), op, std::move(args)));
  }
  for (const Expr& arg : args) {
    DRAGON_CHECK(arg.defined(), "{} of an undefined argument", intrinsic_name(op));
    DRAGON_CHECK(arg.dtype() == args[0].dtype(), "{} arguments of different types", intrinsic_name(op));
  }
  DataType type = args[0].dtype();
  DataType result = type;
  switch (intrinsic_kind(op)) {
    case IntrinsicKind::kFloat:
      DRAGON_CHECK(type.is_float(), "{} of {}", intrinsic_name(op), to_string(type));
      break;
    case IntrinsicKind::kPred:
      DRAGON_CHECK(type.is_float(), "{} of {}", intrinsic_name(op), to_string(type));
      result = DataType::boolean().with_lanes(type.lanes());
      break;
    case IntrinsicKind::kAny:
      DRAGON_CHECK(type.is_float() || type.is_int(), "{} of {}", intrinsic_name(op), to_string(type));
      break;
    case IntrinsicKind::kEffect: break;  // returned above
  }
  return Expr(new CallNode(result, op, std::move(args)));
}

Expr BufferLoadNode::make(Buffer buffer, std::vector<Expr> indices) {
  DRAGON_CHECK(buffer.defined(), "load from an undefined buffer");
  DRAGON_CHECK(static_cast<int>(indices.size()) == buffer.ndim(), "load from {} with {} indices, rank {}",
               buffer->name, indices.size(), buffer.ndim());
  for (const Expr& index : indices) {
    DRAGON_CHECK(index.defined() && index.dtype().is_int() && index.dtype().is_scalar(),
                 "load from {} with a non-integer index", buffer->name);
  }
  return Expr(new BufferLoadNode(std::move(buffer), std::move(indices)));
}

}  // namespace dragon::ir
