// flatten_buffers: every buffer, parameters included, becomes one-dimensional with
// row-major strides, padded where the function's buffer_dim_align attribute (gathered by
// lower_blocks from storage_align) asks; simplify_func tidies the offsets afterwards.
#include <limits>
#include <unordered_map>

#include "dragon/ir/buffer_dim_align.h"
#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/lower/passes.h"

namespace dragon::lower {
namespace {

struct FlatBuffer {
  ir::Buffer buffer;             // one-dimensional
  std::vector<int64_t> strides;  // of the original dimensions
};

FlatBuffer flatten(const ir::Buffer& buffer, const std::vector<ir::BufferDimAlign>& aligns) {
  std::vector<int64_t> strides = ir::aligned_strides(buffer->name, buffer->shape, aligns);
  if (buffer.ndim() == 1 && strides[0] == 1) return FlatBuffer{buffer, strides};  // already flat
  int64_t size = ir::aligned_allocation_size(buffer->shape, strides);
  return FlatBuffer{ir::Buffer::make(buffer->name, buffer->dtype, {size}, buffer->scope), std::move(strides)};
}

class Flattener : public ir::StmtExprMutator {
 public:
  explicit Flattener(std::vector<ir::BufferDimAlign> aligns) : aligns_(std::move(aligns)) {}

  const FlatBuffer& add(const ir::Buffer& buffer) {
    return flat_.emplace(buffer.get(), flatten(buffer, aligns_)).first->second;
  }

 protected:
  ir::Stmt visit_(const ir::AllocateNode* op) override {
    const FlatBuffer& flat = add(op->buffer);
    ir::Stmt body = visit(op->body);
    if (flat.buffer.same_as(op->buffer) && body.same_as(op->body)) return ir::Stmt(op);
    return ir::AllocateNode::make(flat.buffer, std::move(body));
  }
  ir::Expr visit_(const ir::BufferLoadNode* op) override {
    ir::Expr visited = ir::StmtExprMutator::visit_(op);  // loads inside indices first
    const auto* load = visited.as<ir::BufferLoadNode>();
    const FlatBuffer& flat = lookup(load->buffer);
    if (flat.buffer.same_as(load->buffer)) return visited;
    return ir::BufferLoadNode::make(flat.buffer, {offset(flat, load->indices)});
  }
  ir::Stmt visit_(const ir::BufferStoreNode* op) override {
    ir::Stmt visited = ir::StmtExprMutator::visit_(op);
    const auto* store = visited.as<ir::BufferStoreNode>();
    const FlatBuffer& flat = lookup(store->buffer);
    if (flat.buffer.same_as(store->buffer)) return visited;
    return ir::BufferStoreNode::make(flat.buffer, store->value, {offset(flat, store->indices)});
  }

 private:
  const FlatBuffer& lookup(const ir::Buffer& buffer) const {
    auto it = flat_.find(buffer.get());
    DRAGON_CHECK(it != flat_.end(), "buffer '{}' is accessed outside its allocation", buffer->name);
    return it->second;
  }

  // sum(index[d] * stride[d]) in i32, or in i64 when an index is i64 or the buffer does
  // not fit i32 offsets.
  static ir::Expr offset(const FlatBuffer& flat, const std::vector<ir::Expr>& indices) {
    bool wide = flat.buffer->shape[0] > std::numeric_limits<int32_t>::max();
    for (const ir::Expr& index : indices) wide |= index.dtype() == ir::DataType::i64();
    ir::DataType type = wide ? ir::DataType::i64() : ir::DataType::i32();
    ir::Expr sum;
    for (size_t d = 0; d < indices.size(); ++d) {
      ir::Expr index = indices[d].dtype() == type ? indices[d] : ir::cast(type, indices[d]);
      ir::Expr term = flat.strides[d] == 1 ? index : index * ir::make_const(type, static_cast<double>(flat.strides[d]));
      sum = sum.defined() ? sum + term : term;
    }
    return sum.defined() ? sum : ir::make_zero(type);  // a scalar buffer
  }

  std::vector<ir::BufferDimAlign> aligns_;
  std::unordered_map<const ir::BufferNode*, FlatBuffer> flat_;
};

}  // namespace

ir::PrimFunc flatten_buffers(const ir::PrimFunc& func) {
  DRAGON_CHECK(func.root_block() == nullptr, "flatten_buffers runs on block-free IR (after lower_blocks)");
  const std::string key(ir::kBufferDimAlignKey);
  ir::Annotations attrs = func->attrs;
  std::vector<ir::BufferDimAlign> aligns;
  if (auto it = attrs.find(key); it != attrs.end()) {
    const auto* text = std::get_if<std::string>(&it->second);
    if (text == nullptr) throw UserError(fmt::format("function '{}': {} is not a string", func->name, key));
    aligns = ir::parse_buffer_dim_align(*text);
    attrs.erase(it);
  }
  const bool had_aligns = attrs.size() != func->attrs.size();
  Flattener flattener(aligns);
  std::vector<ir::Param> params = func->params;
  bool params_changed = false;
  for (ir::Param& p : params) {
    for (const ir::BufferDimAlign& a : aligns) {
      if (a.buffer == p.buffer->name) {
        throw UserError(fmt::format("function '{}': buffer_dim_align pads parameter '{}', whose layout the caller "
                                    "owns; only intermediate buffers can be aligned",
                                    func->name, p.buffer->name));
      }
    }
    ir::Buffer flat = flattener.add(p.buffer).buffer;
    params_changed |= !flat.same_as(p.buffer);
    p.buffer = std::move(flat);
  }
  ir::Stmt body = flattener.visit(func->body);
  if (!had_aligns && !params_changed && body.same_as(func->body)) return func;
  return ir::PrimFunc::make(func->name, std::move(params), std::move(body), std::move(attrs));
}

}  // namespace dragon::lower
