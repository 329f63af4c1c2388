// Construction of statement nodes, with their structural rules checked once here.
#include "dragon/ir/stmt.h"

#include "dragon/ir/op.h"
#include "dragon/support/error.h"

namespace dragon::ir {

std::string_view for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kThreadBinding: return "bind";
  }
  DRAGON_UNREACHABLE("for kind {}", static_cast<int>(kind));
}

std::string_view iter_kind_name(IterKind kind) {
  switch (kind) {
    case IterKind::kSpatial: return "S";
    case IterKind::kReduce: return "R";
    case IterKind::kOrdered: return "O";
    case IterKind::kOpaque: return "X";
  }
  DRAGON_UNREACHABLE("iter kind {}", static_cast<int>(kind));
}

Range Range::from_extent(Expr extent) {
  DRAGON_CHECK(extent.defined(), "range with an undefined extent");
  return Range{make_zero(extent.dtype()), std::move(extent)};
}

BufferRegion BufferRegion::full(const Buffer& buffer) {
  BufferRegion result{buffer, {}};
  for (int64_t extent : buffer->shape) {
    // Index type follows the extent: i64 where an extent does not fit i32.
    DataType type = extent > int_max_value(DataType::i32()) ? DataType::i64() : DataType::i32();
    result.region.push_back(Range{make_zero(type), make_const(type, static_cast<double>(extent))});
  }
  return result;
}

Stmt ForNode::make(Var loop_var, Expr min, Expr extent, ForKind for_kind, Stmt body, std::string thread_tag,
                   Annotations annotations) {
  DRAGON_CHECK(loop_var.defined() && loop_var.dtype().is_int(), "loop variable must be an integer");
  DRAGON_CHECK(min.defined() && extent.defined(), "loop {} without bounds", loop_var.name());
  DRAGON_CHECK(min.dtype() == loop_var.dtype() && extent.dtype() == loop_var.dtype(),
               "loop {} of type {} with bounds of type {} and {}", loop_var.name(), to_string(loop_var.dtype()),
               to_string(min.dtype()), to_string(extent.dtype()));
  DRAGON_CHECK(body.defined(), "loop {} without a body", loop_var.name());
  DRAGON_CHECK((for_kind == ForKind::kThreadBinding) == !thread_tag.empty(),
               "loop {}: a thread tag goes with a bound loop and only with one", loop_var.name());
  auto* node = new ForNode();
  node->loop_var = std::move(loop_var);
  node->min = std::move(min);
  node->extent = std::move(extent);
  node->for_kind = for_kind;
  node->thread_tag = std::move(thread_tag);
  node->annotations = std::move(annotations);
  node->body = std::move(body);
  return Stmt(node);
}

Block BlockNode::make(std::string name, std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                      std::vector<BufferRegion> writes, Stmt body, Stmt init, std::vector<Buffer> alloc_buffers,
                      Annotations annotations) {
  DRAGON_CHECK(!name.empty(), "block without a name");
  DRAGON_CHECK(body.defined(), "block {} without a body", name);
  for (const IterVar& iv : iter_vars) {
    DRAGON_CHECK(iv.var.defined() && iv.dom.min.defined() && iv.dom.extent.defined(),
                 "block {} with an incomplete iteration variable", name);
  }
  auto check_regions = [&](const std::vector<BufferRegion>& regions) {
    for (const BufferRegion& r : regions) {
      DRAGON_CHECK(r.buffer.defined() && static_cast<int>(r.region.size()) == r.buffer.ndim(),
                   "block {}: region rank does not match its buffer", name);
    }
  };
  check_regions(reads);
  check_regions(writes);
  auto* node = new BlockNode();
  node->name = std::move(name);
  node->iter_vars = std::move(iter_vars);
  node->reads = std::move(reads);
  node->writes = std::move(writes);
  node->alloc_buffers = std::move(alloc_buffers);
  node->init = std::move(init);
  node->body = std::move(body);
  node->annotations = std::move(annotations);
  return Block(node);
}

Stmt BlockRealizeNode::make(std::vector<Expr> iter_values, Expr predicate, Block block) {
  DRAGON_CHECK(block.defined(), "realization of an undefined block");
  DRAGON_CHECK(iter_values.size() == block->iter_vars.size(), "block {} has {} iteration variables, bound to {} values",
               block->name, block->iter_vars.size(), iter_values.size());
  for (size_t i = 0; i < iter_values.size(); ++i) {
    DRAGON_CHECK(iter_values[i].defined() && iter_values[i].dtype() == block->iter_vars[i].var.dtype(),
                 "block {}: binding of {} has the wrong type", block->name, block->iter_vars[i].var.name());
  }
  if (!predicate.defined()) predicate = make_bool(true);
  DRAGON_CHECK(predicate.dtype().is_bool(), "block {}: predicate is not bool", block->name);
  auto* node = new BlockRealizeNode();
  node->iter_values = std::move(iter_values);
  node->predicate = std::move(predicate);
  node->block = std::move(block);
  return Stmt(node);
}

Stmt SeqStmtNode::make(std::vector<Stmt> seq) {
  std::vector<Stmt> flat;
  flat.reserve(seq.size());
  for (Stmt& s : seq) {
    DRAGON_CHECK(s.defined(), "sequence with an undefined statement");
    if (const auto* inner = s.as<SeqStmtNode>()) {
      flat.insert(flat.end(), inner->seq.begin(), inner->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  DRAGON_CHECK(!flat.empty(), "empty statement sequence");
  if (flat.size() == 1) return flat[0];
  auto* node = new SeqStmtNode();
  node->seq = std::move(flat);
  return Stmt(node);
}

Stmt IfThenElseNode::make(Expr condition, Stmt then_case, Stmt else_case) {
  DRAGON_CHECK(condition.defined() && condition.dtype() == DataType::boolean(), "if condition is not bool");
  DRAGON_CHECK(then_case.defined(), "if without a then case");
  auto* node = new IfThenElseNode();
  node->condition = std::move(condition);
  node->then_case = std::move(then_case);
  node->else_case = std::move(else_case);
  return Stmt(node);
}

Stmt BufferStoreNode::make(Buffer buffer, Expr value, std::vector<Expr> indices) {
  DRAGON_CHECK(buffer.defined() && value.defined(), "store with undefined operands");
  DRAGON_CHECK(static_cast<int>(indices.size()) == buffer.ndim(), "store to {} with {} indices, rank {}",
               buffer->name, indices.size(), buffer.ndim());
  DRAGON_CHECK(value.dtype().element_of() == buffer->dtype, "store of {} into {} buffer {}",
               to_string(value.dtype()), to_string(buffer->dtype), buffer->name);
  for (const Expr& index : indices) {
    DRAGON_CHECK(index.defined() && index.dtype().is_int() && index.dtype().is_scalar(),
                 "store to {} with a non-integer index", buffer->name);
  }
  auto* node = new BufferStoreNode();
  node->buffer = std::move(buffer);
  node->value = std::move(value);
  node->indices = std::move(indices);
  return Stmt(node);
}

Stmt AllocateNode::make(Buffer buffer, Stmt body) {
  DRAGON_CHECK(buffer.defined() && body.defined(), "allocation with undefined operands");
  auto* node = new AllocateNode();
  node->buffer = std::move(buffer);
  node->body = std::move(body);
  return Stmt(node);
}

Stmt EvaluateNode::make(Expr value) {
  DRAGON_CHECK(value.defined(), "evaluation of an undefined expression");
  auto* node = new EvaluateNode();
  node->value = std::move(value);
  return Stmt(node);
}

}  // namespace dragon::ir
