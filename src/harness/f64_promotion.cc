// Promotion of a function's float arithmetic to f64 (the harness's accuracy reference).
#include "dragon/harness/f64_promotion.h"

#include <unordered_map>

#include "dragon/ir/functor.h"

namespace dragon::harness {
namespace {

bool needs_promotion(ir::DataType dtype) { return dtype.is_float() && dtype.element_of() != ir::DataType::f64(); }

ir::DataType promoted(ir::DataType dtype) {
  return needs_promotion(dtype) ? ir::DataType::f64().with_lanes(dtype.lanes()) : dtype;
}

class F64Promoter : public ir::StmtExprMutator {
 public:
  ir::Buffer buffer(const ir::Buffer& original) {
    if (!needs_promotion(original->dtype)) return original;
    auto [it, inserted] = buffers_.try_emplace(original.get());
    if (inserted) {
      it->second = ir::Buffer::make(original->name, promoted(original->dtype), original->shape, original->scope);
    }
    return it->second;
  }

 protected:
  using ir::StmtExprMutator::visit_;

  ir::Expr visit_(const ir::FloatImmNode* op) override {
    if (!needs_promotion(op->dtype)) return ir::Expr(op);
    return ir::FloatImmNode::make(promoted(op->dtype), op->value);
  }
  ir::Expr visit_(const ir::VarNode* op) override {
    // Variables are loop and block iterators; a float one would need a substitution map.
    DRAGON_CHECK(!op->dtype.is_float(), "float variable {} in a function promoted to f64", op->name);
    return ir::Expr(op);
  }
  ir::Expr visit_(const ir::CastNode* op) override {
    ir::Expr value = visit(op->value);
    ir::DataType target = promoted(op->dtype);
    // A rounding cast (f32 -> f16 and back) disappears: both sides are now f64.
    if (value.dtype() == target) return value;
    return ir::CastNode::make(target, std::move(value));
  }
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    std::vector<ir::Expr> indices;
    visit_all(op->indices, indices);
    return ir::BufferLoadNode::make(buffer(op->buffer), std::move(indices));
  }

  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    std::vector<ir::Expr> indices;
    visit_all(op->indices, indices);
    return ir::BufferStoreNode::make(buffer(op->buffer), visit(op->value), std::move(indices));
  }
  ir::Stmt visit_(const ir::AllocateNode* op) override {
    return ir::AllocateNode::make(buffer(op->buffer), visit(op->body));
  }
  ir::Stmt visit_(const ir::BlockNode* op) override {
    ir::Stmt visited = ir::StmtExprMutator::visit_(op);
    const auto* block = visited.as<ir::BlockNode>();
    DRAGON_CHECK(block != nullptr, "block {} was mutated into another statement", op->name);
    auto retype = [&](const std::vector<ir::BufferRegion>& regions) {
      std::vector<ir::BufferRegion> result = regions;
      for (ir::BufferRegion& region : result) region.buffer = buffer(region.buffer);
      return result;
    };
    std::vector<ir::Buffer> allocations;
    for (const ir::Buffer& b : block->alloc_buffers) allocations.push_back(buffer(b));
    return ir::BlockNode::make(block->name, block->iter_vars, retype(block->reads), retype(block->writes), block->body,
                               block->init, std::move(allocations), block->annotations);
  }

 private:
  std::unordered_map<const ir::BufferNode*, ir::Buffer> buffers_;
};

}  // namespace

ir::PrimFunc promote_floats_to_f64(const ir::PrimFunc& func) {
  F64Promoter promoter;
  std::vector<ir::Param> params = func->params;
  // Parameters first, so that the body refers to the very same promoted buffers.
  for (ir::Param& param : params) param.buffer = promoter.buffer(param.buffer);
  ir::Stmt body = promoter.visit(func->body);
  return ir::PrimFunc::make(func->name + "_f64", std::move(params), std::move(body), func->attrs);
}

}  // namespace dragon::harness
