// lower_blocks: removes every Block: iteration variables become their bindings, predicates
// IfThenElse, alloc_buffers Allocate, kept annotations ride on a unit loop and
// storage_align entries move to the function's attrs. Runs after lower_reduction_init.
#include <string>
#include <string_view>
#include <unordered_map>

#include "dragon/ir/buffer_dim_align.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

// Block annotations that must survive as loop annotations (lower.h).
bool keeps_annotations(const ir::Annotations& annotations) { return annotations.count("tensor_intrin") > 0; }

const std::string kBufferDimAlign(ir::kBufferDimAlignKey);

// Appends the entries of an annotation value (a string in buffer_dim_align's text form).
void append_dim_aligns(const ir::AnnotationValue& value, std::string_view owner,
                       std::vector<ir::BufferDimAlign>& entries) {
  const auto* text = std::get_if<std::string>(&value);
  if (text == nullptr) throw UserError(fmt::format("{}: {} is not a string", owner, kBufferDimAlign));
  for (ir::BufferDimAlign& e : ir::parse_buffer_dim_align(*text)) entries.push_back(std::move(e));
}

class BlockLowerer : public ir::StmtExprMutator {
 public:
  // The storage_align entries of every block (flatten_buffers reads them from the
  // function's attrs once the blocks are gone).
  std::vector<ir::BufferDimAlign> dim_aligns;

 protected:
  ir::Expr visit_(const ir::VarNode* op) override {
    auto it = bindings_.find(op);
    return it == bindings_.end() ? ir::Expr(op) : it->second;
  }

  ir::Stmt visit_(const ir::BlockRealizeNode* op) override {
    const ir::BlockNode* block = op->block.get();
    DRAGON_CHECK(!block->init.defined(), "block '{}' still has an init: lower_blocks runs after lower_reduction_init",
                 block->name);
    std::vector<ir::Expr> values;
    for (const ir::Expr& v : op->iter_values) values.push_back(mutate_expr(v));
    ir::Expr predicate = mutate_expr(op->predicate);
    for (size_t i = 0; i < values.size(); ++i) bindings_[block->iter_vars[i].var.get()] = values[i];
    ir::Stmt body = visit(block->body);
    for (const ir::IterVar& iv : block->iter_vars) bindings_.erase(iv.var.get());

    for (auto b = block->alloc_buffers.rbegin(); b != block->alloc_buffers.rend(); ++b) {
      body = ir::AllocateNode::make(*b, body);
    }
    if (!ir::is_const_int(predicate, 1)) body = ir::IfThenElseNode::make(predicate, body);

    ir::Annotations kept = block->annotations;
    if (auto align = kept.find(kBufferDimAlign); align != kept.end()) {
      append_dim_aligns(align->second, "block '" + block->name + "'", dim_aligns);
      kept.erase(align);
    }
    if (keeps_annotations(kept)) {
      body = ir::ForNode::make(ir::Var(block->name + "_unit"), ir::make_zero(ir::DataType::i32()),
                               ir::make_one(ir::DataType::i32()), ir::ForKind::kSerial, body, {}, std::move(kept));
    }
    return body;
  }

 private:
  std::unordered_map<const ir::VarNode*, ir::Expr> bindings_;
};

}  // namespace

ir::PrimFunc lower_blocks(const ir::PrimFunc& func) {
  BlockLowerer lowerer;
  ir::Stmt body = lowerer.visit(func->body);
  if (body.same_as(func->body)) return func;
  ir::Annotations attrs = func->attrs;
  if (!lowerer.dim_aligns.empty()) {
    std::vector<ir::BufferDimAlign> entries;
    if (auto earlier = attrs.find(kBufferDimAlign); earlier != attrs.end()) {
      append_dim_aligns(earlier->second, "function '" + func->name + "'", entries);
    }
    entries.insert(entries.end(), lowerer.dim_aligns.begin(), lowerer.dim_aligns.end());
    attrs[kBufferDimAlign] = ir::format_buffer_dim_align(std::move(entries));
  }
  return ir::PrimFunc::make(func->name, func->params, std::move(body), std::move(attrs));
}

}  // namespace dragon::lower
