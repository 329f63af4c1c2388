// Statement code of the interpreter and its compiler: loops of every kind run in order,
// blocks bind their iteration variables, skip on a false predicate, allocate their
// buffers (NaN-filled) and run init when every reduce variable is at its domain's min.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "compiled_code.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/support/error.h"
#include "expr_code.h"

namespace dragon::interp::detail {
namespace {

// A buffer that comes to life when its owner (block or Allocate) runs.
struct Allocation {
  int slot;
  int64_t bytes;
  std::vector<uint8_t> pattern;  // one element's bytes

  void allocate(Frame& frame) const {
    std::vector<uint8_t>& storage = frame.storage[slot];
    storage.resize(static_cast<size_t>(bytes));
    size_t width = pattern.size();
    if (bytes > 0) {
      // Fill by doubling copies: one element, then two, four, ...
      std::memcpy(storage.data(), pattern.data(), width);
      for (size_t done = width; done < storage.size();) {
        size_t chunk = std::min(done, storage.size() - done);
        std::memcpy(storage.data() + done, storage.data(), chunk);
        done += chunk;
      }
    }
    frame.buffers[slot] = storage.data();
  }
};

Allocation make_allocation(const ir::Buffer& buffer, int slot) {
  return Allocation{slot, buffer->num_elements() * buffer->dtype.bytes(), uninitialized_pattern(buffer->dtype)};
}

class ForCode final : public StmtCode {
 public:
  ForCode(int slot, ExprPtr min, ExprPtr extent, StmtPtr body)
      : slot_(slot), min_(std::move(min)), extent_(std::move(extent)), body_(std::move(body)) {}
  void exec(Frame& frame) const override {
    int64_t min = min_->eval_int(frame);
    int64_t end = min + extent_->eval_int(frame);
    for (int64_t i = min; i < end; ++i) {
      frame.vars[slot_] = i;
      body_->exec(frame);
    }
  }

 private:
  int slot_;
  ExprPtr min_, extent_;
  StmtPtr body_;
};

class SeqCode final : public StmtCode {
 public:
  explicit SeqCode(std::vector<StmtPtr> seq) : seq_(std::move(seq)) {}
  void exec(Frame& frame) const override {
    for (const StmtPtr& s : seq_) s->exec(frame);
  }

 private:
  std::vector<StmtPtr> seq_;
};

class IfCode final : public StmtCode {
 public:
  IfCode(ExprPtr condition, StmtPtr then_case, StmtPtr else_case)
      : condition_(std::move(condition)), then_(std::move(then_case)), else_(std::move(else_case)) {}
  void exec(Frame& frame) const override {
    if (condition_->eval_int(frame) != 0) {
      then_->exec(frame);
    } else if (else_) {
      else_->exec(frame);
    }
  }

 private:
  ExprPtr condition_;
  StmtPtr then_, else_;
};

template <typename Element>
class StoreCode final : public StmtCode {
 public:
  StoreCode(Access access, ExprPtr value) : access_(std::move(access)), value_(std::move(value)) {}
  void exec(Frame& frame) const override {
    if constexpr (std::is_base_of_v<FloatElement<Element>, Element>) {
      double value = value_->eval_float(frame);
      Element::write_float(frame.buffers[access_.slot()], access_.offset(frame), value);
    } else {
      int64_t value = value_->eval_int(frame);
      Element::write_int(frame.buffers[access_.slot()], access_.offset(frame), value);
    }
  }

 private:
  Access access_;
  ExprPtr value_;
};

// buffer[idx] = buffer[idx] op rhs, the update of every reduction: one offset computation
// and one virtual call fewer than a load, a binary node and a store. Same results: the
// expression is pure and the operation is applied in the same type.
template <typename Op, typename Format, typename Element>
class AccumulateCode final : public StmtCode {
 public:
  AccumulateCode(Access access, ExprPtr rhs) : access_(std::move(access)), rhs_(std::move(rhs)) {}
  void exec(Frame& frame) const override {
    using T = typename Format::Compute;
    int64_t flat = access_.offset(frame);
    T acc = static_cast<T>(Element::read_float(frame.buffers[access_.slot()], flat));
    T x = static_cast<T>(rhs_->eval_float(frame));
    Element::write_float(frame.buffers[access_.slot()], flat, Format::round(static_cast<double>(Op::apply(acc, x))));
  }

 private:
  Access access_;
  ExprPtr rhs_;
};

template <typename Op>
StmtPtr make_accumulate(ir::DataType dtype, Access access, ExprPtr rhs) {
  switch (float_format_of(dtype)) {
    case FloatFormat::kF64:
      return std::make_unique<AccumulateCode<Op, F64Format, F64Element>>(std::move(access), std::move(rhs));
    case FloatFormat::kF32:
      return std::make_unique<AccumulateCode<Op, F32Format, F32Element>>(std::move(access), std::move(rhs));
    case FloatFormat::kF16:
      return std::make_unique<AccumulateCode<Op, F16Format, F16Element>>(std::move(access), std::move(rhs));
    case FloatFormat::kBF16:
      return std::make_unique<AccumulateCode<Op, BF16Format, BF16Element>>(std::move(access), std::move(rhs));
  }
  DRAGON_UNREACHABLE("float format");
}

// Whether two index expressions certainly denote the same value: the same node, the same
// variable or equal constants.
bool same_index(const ir::Expr& a, const ir::Expr& b) {
  if (a.same_as(b)) return true;
  if (const auto* va = a.as<ir::VarNode>()) return va == b.as<ir::VarNode>();
  std::optional<int64_t> ca = ir::as_const_int(a), cb = ir::as_const_int(b);
  return ca && cb && *ca == *cb;
}

// The operand that is not a load of `store`'s own element, when the other one is.
const ir::Expr* accumulated_operand(const ir::BufferStoreNode* store, const ir::Expr& a, const ir::Expr& b) {
  auto is_own_element = [&](const ir::Expr& e) {
    const auto* load = e.as<ir::BufferLoadNode>();
    if (!load || !load->buffer.same_as(store->buffer) || load->indices.size() != store->indices.size()) return false;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      if (!same_index(load->indices[d], store->indices[d])) return false;
    }
    return true;
  };
  if (is_own_element(a)) return &b;
  if (is_own_element(b)) return &a;  // the four operations fused here are commutative
  return nullptr;
}

class EvaluateCode final : public StmtCode {
 public:
  explicit EvaluateCode(ExprPtr value) : value_(std::move(value)) {}
  void exec(Frame& frame) const override {
    if (value_->dtype().is_float()) {
      (void)value_->eval_float(frame);
    } else {
      (void)value_->eval_int(frame);
    }
  }

 private:
  ExprPtr value_;
};

class AllocateCode final : public StmtCode {
 public:
  AllocateCode(Allocation allocation, StmtPtr body) : allocation_(std::move(allocation)), body_(std::move(body)) {}
  void exec(Frame& frame) const override {
    allocation_.allocate(frame);
    body_->exec(frame);
  }

 private:
  Allocation allocation_;
  StmtPtr body_;
};

class BlockRealizeCode final : public StmtCode {
 public:
  struct Binding {
    int slot;
    ExprPtr value;
    int source_slot;  // >= 0 when the value is a plain variable: copied without a call
  };
  // A reduce iteration variable and its domain's min: init runs when all are at it.
  struct ReduceStart {
    int slot;
    ExprPtr min;  // null when the min is the constant const_min
    int64_t const_min;
  };

  BlockRealizeCode(ExprPtr predicate, std::vector<Binding> bindings, std::vector<ReduceStart> reduce_starts,
                   std::vector<Allocation> allocations, StmtPtr init, StmtPtr body)
      : predicate_(std::move(predicate)),
        bindings_(std::move(bindings)),
        reduce_starts_(std::move(reduce_starts)),
        allocations_(std::move(allocations)),
        init_(std::move(init)),
        body_(std::move(body)) {}

  void exec(Frame& frame) const override {
    if (predicate_ && predicate_->eval_int(frame) == 0) return;
    // Iteration variables have slots of their own, so assigning in order is safe: no
    // binding reads another iteration variable of the same block.
    for (const Binding& b : bindings_) {
      frame.vars[b.slot] = b.source_slot >= 0 ? frame.vars[b.source_slot] : b.value->eval_int(frame);
    }
    for (const Allocation& a : allocations_) a.allocate(frame);
    if (init_) {
      bool at_start = true;
      for (const ReduceStart& r : reduce_starts_) {
        if (frame.vars[r.slot] != (r.min ? r.min->eval_int(frame) : r.const_min)) {
          at_start = false;
          break;
        }
      }
      if (at_start) init_->exec(frame);
    }
    body_->exec(frame);
  }

 private:
  ExprPtr predicate_;  // null when always true
  std::vector<Binding> bindings_;
  std::vector<ReduceStart> reduce_starts_;
  std::vector<Allocation> allocations_;
  StmtPtr init_;  // may be null
  StmtPtr body_;
};

Context make_context(std::string text) { return std::make_shared<const std::string>(std::move(text)); }

class StmtCompiler final : public ir::StmtFunctor<StmtPtr> {
 public:
  explicit StmtCompiler(Compiler& compiler) : compiler_(compiler) {}

  StmtPtr compile(const ir::Stmt& s) {
    DRAGON_CHECK(s.defined(), "compiling an undefined statement");
    return visit(s);
  }

 protected:
  StmtPtr visit_(const ir::ForNode* op) override {
    compiler_.set_context(make_context(
        fmt::format("the bounds of loop {} ({}){}", op->loop_var.name(), ir::for_kind_name(op->for_kind), where())));
    require_int(op->loop_var, "loop variable");
    ExprPtr min = compiler_.expr(op->min);
    ExprPtr extent = compiler_.expr(op->extent);
    require_int_expr(op->min, "loop min");
    require_int_expr(op->extent, "loop extent");
    int slot = compiler_.bind_var(op->loop_var);
    StmtPtr body = compile(op->body);
    compiler_.unbind_var(op->loop_var);
    return std::make_unique<ForCode>(slot, std::move(min), std::move(extent), std::move(body));
  }

  StmtPtr visit_(const ir::BlockNode* op) override {
    throw UserError(fmt::format("block {} appears without a BlockRealize{}", op->name, where()));
  }

  StmtPtr visit_(const ir::BlockRealizeNode* op) override {
    const ir::BlockNode* block = op->block.get();
    compiler_.set_context(make_context(fmt::format("the bindings of block \"{}\"", block->name)));
    if (op->iter_values.size() != block->iter_vars.size()) {
      throw UserError(fmt::format("block \"{}\" has {} iteration variables but {} bindings", block->name,
                                  block->iter_vars.size(), op->iter_values.size()));
    }
    ExprPtr predicate;
    if (op->predicate.defined() && !ir::is_const_int(op->predicate, 1)) {
      require_int_expr(op->predicate, "block predicate");
      predicate = compiler_.expr(op->predicate);
    }
    std::vector<ExprPtr> values;
    for (const ir::Expr& value : op->iter_values) {
      require_int_expr(value, "block binding");
      values.push_back(compiler_.expr(value));
    }
    std::vector<ExprPtr> reduce_mins;
    for (const ir::IterVar& iv : block->iter_vars) {
      if (iv.kind == ir::IterKind::kReduce) reduce_mins.push_back(compiler_.expr(iv.dom.min));
    }

    std::string outer_block = compiler_.block_name();
    compiler_.set_block_name(block->name);
    std::vector<BlockRealizeCode::Binding> bindings;
    std::vector<BlockRealizeCode::ReduceStart> reduce_starts;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const ir::IterVar& iv = block->iter_vars[i];
      require_int(iv.var, "block iteration variable");
      int slot = compiler_.bind_var(iv.var);
      int source_slot = var_slot_of(*values[i]);
      bindings.push_back({slot, std::move(values[i]), source_slot});
      if (iv.kind == ir::IterKind::kReduce) {
        ExprPtr& min = reduce_mins[reduce_starts.size()];
        std::optional<int64_t> const_min = const_int_of(*min);
        if (const_min) min.reset();
        reduce_starts.push_back({slot, std::move(min), const_min.value_or(0)});
      }
    }
    std::vector<Allocation> allocations;
    for (const ir::Buffer& buffer : block->alloc_buffers) {
      allocations.push_back(make_allocation(buffer, compiler_.bind_buffer(buffer)));
    }
    StmtPtr init = block->init.defined() ? compile(block->init) : nullptr;
    StmtPtr body = compile(block->body);
    for (const ir::Buffer& buffer : block->alloc_buffers) compiler_.unbind_buffer(buffer);
    for (const ir::IterVar& iv : block->iter_vars) compiler_.unbind_var(iv.var);
    compiler_.set_block_name(outer_block);

    return std::make_unique<BlockRealizeCode>(std::move(predicate), std::move(bindings), std::move(reduce_starts),
                                              std::move(allocations), std::move(init), std::move(body));
  }

  StmtPtr visit_(const ir::SeqStmtNode* op) override {
    std::vector<StmtPtr> seq;
    for (const ir::Stmt& s : op->seq) seq.push_back(compile(s));
    return std::make_unique<SeqCode>(std::move(seq));
  }

  StmtPtr visit_(const ir::IfThenElseNode* op) override {
    compiler_.set_context(make_context(fmt::format("the condition of an IfThenElse{}", where())));
    require_int_expr(op->condition, "IfThenElse condition");
    ExprPtr condition = compiler_.expr(op->condition);
    StmtPtr then_case = compile(op->then_case);
    StmtPtr else_case = op->else_case.defined() ? compile(op->else_case) : nullptr;
    return std::make_unique<IfCode>(std::move(condition), std::move(then_case), std::move(else_case));
  }

  StmtPtr visit_(const ir::BufferStoreNode* op) override {
    compiler_.set_context(make_context(fmt::format("a BufferStore to {}{}", op->buffer->name, where())));
    if (op->value.dtype() != op->buffer->dtype) {
      throw UserError(fmt::format("a {} value stored into buffer {} of type {}, in {}",
                                  ir::to_string(op->value.dtype()), op->buffer->name, ir::to_string(op->buffer->dtype),
                                  *compiler_.context()));
    }
    if (StmtPtr fused = compile_accumulate(op)) return fused;
    ExprPtr value = compiler_.expr(op->value);
    std::vector<ExprPtr> indices;
    for (const ir::Expr& index : op->indices) {
      require_int_expr(index, "buffer index");
      indices.push_back(compiler_.expr(index));
    }
    Access access(op->buffer, compiler_.buffer_slot(op->buffer), std::move(indices), /*is_store=*/true,
                  compiler_.context());
    return make_element_node<StoreCode, StmtCode>(op->buffer->dtype, std::move(access), std::move(value));
  }

  StmtPtr visit_(const ir::AllocateNode* op) override {
    Allocation allocation = make_allocation(op->buffer, compiler_.bind_buffer(op->buffer));
    StmtPtr body = compile(op->body);
    compiler_.unbind_buffer(op->buffer);
    return std::make_unique<AllocateCode>(std::move(allocation), std::move(body));
  }

  StmtPtr visit_(const ir::EvaluateNode* op) override {
    compiler_.set_context(make_context(fmt::format("an Evaluate{}", where())));
    return std::make_unique<EvaluateCode>(compiler_.expr(op->value));
  }

 private:
  // C[i] = C[i] op x for op in +, *, min, max on floats, or null.
  StmtPtr compile_accumulate(const ir::BufferStoreNode* op) {
    if (!op->buffer->dtype.is_float()) return nullptr;
    const ir::Expr& v = op->value;
    const ir::Expr* rhs = nullptr;
    if (const auto* add = v.as<ir::AddNode>()) rhs = accumulated_operand(op, add->a, add->b);
    if (const auto* mul = v.as<ir::MulNode>()) rhs = accumulated_operand(op, mul->a, mul->b);
    if (const auto* min = v.as<ir::MinNode>()) rhs = accumulated_operand(op, min->a, min->b);
    if (const auto* max = v.as<ir::MaxNode>()) rhs = accumulated_operand(op, max->a, max->b);
    if (!rhs) return nullptr;
    ExprPtr rhs_code = compiler_.expr(*rhs);
    std::vector<ExprPtr> indices;
    for (const ir::Expr& index : op->indices) {
      require_int_expr(index, "buffer index");
      indices.push_back(compiler_.expr(index));
    }
    // The load comes first in the unfused form, so an out-of-bounds index is a load's error.
    Access access(op->buffer, compiler_.buffer_slot(op->buffer), std::move(indices), /*is_store=*/false,
                  compiler_.context());
    ir::DataType t = op->buffer->dtype;
    switch (v.kind()) {
      case ir::NodeKind::Add: return make_accumulate<AddOp>(t, std::move(access), std::move(rhs_code));
      case ir::NodeKind::Mul: return make_accumulate<MulOp>(t, std::move(access), std::move(rhs_code));
      case ir::NodeKind::Min: return make_accumulate<MinOp>(t, std::move(access), std::move(rhs_code));
      case ir::NodeKind::Max: return make_accumulate<MaxOp>(t, std::move(access), std::move(rhs_code));
      default: DRAGON_UNREACHABLE("accumulate of {}", ir::node_kind_name(v.kind()));
    }
  }

  std::string where() const {
    return compiler_.block_name().empty() ? std::string() : fmt::format(" in block \"{}\"", compiler_.block_name());
  }
  void require_int(const ir::Var& var, std::string_view what) {
    if (!var.dtype().is_int()) {
      throw UserError(fmt::format("{} {} has type {}, not an integer type{}", what, var.name(),
                                  ir::to_string(var.dtype()), where()));
    }
  }
  void require_int_expr(const ir::Expr& e, std::string_view what) {
    if (e.dtype().is_float()) {
      throw UserError(fmt::format("{} of float type {}{}", what, ir::to_string(e.dtype()), where()));
    }
  }

  Compiler& compiler_;
};

}  // namespace

StmtPtr Compiler::stmt(const ir::Stmt& s) { return StmtCompiler(*this).compile(s); }

}  // namespace dragon::interp::detail
