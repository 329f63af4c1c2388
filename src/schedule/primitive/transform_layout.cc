// transform_layout: replaces an intermediate buffer by one laid out by an IndexMap
// (tiling, permutation, fusing or splitting of dimensions); every access B[idx] becomes
// B[map(idx)]. The map is checked injective by enumerating the buffer's indices, so it
// never pads; padding layouts (TVM's pad_value) are not supported.
#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/schedule/index_map.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct TransformLayoutPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Which list of a block's accesses buffer_index refers to (TVM's values).
  enum class BufferIndexType : uint8_t { kRead = 0, kWrite = 1 };
  // Replaces buffer `reads[buffer_index]` or `writes[buffer_index]` of the block by a
  // buffer of the same name, dtype and scope whose shape is the image of the old shape
  // under `index_map` (schedule/index_map.h: each new extent is the largest image + 1):
  // every access B[idx] of the function (loads, stores, access regions, the allocation)
  // becomes B[index_map(idx)], simplified. Recorded as TVM v0.18 does:
  // TransformLayout(block, "lambda ..." | buffer_index, 0 read / 1 write, None, false).
  // Requires:
  //   1) the index is one of the block's reads or writes (IndexOutOfRange)
  //   2) the buffer is allocated in a block, not a parameter (ParameterBuffer)
  //   3) the map has one parameter per dimension of the buffer (MapArityMismatch)
  //   4) the map fuses and permutes whole dimensions (IndexMap::as_fusion), or the buffer
  //      has at most 2^20 elements, the limit of the checks below (DomainTooLarge)
  //   5) no index of the buffer maps to a negative index (NegativeIndex)
  //   6) no two indices of the buffer map to the same index (NotInjective).
  void transform_layout(BlockRV block, int64_t buffer_index, BufferIndexType buffer_index_type,
                        const class IndexMap& index_map);
  CheckResult check_transform_layout(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::TransformLayoutPlan> plan_transform_layout(BlockRV block, std::optional<int64_t> buffer_index,
                                                                     std::optional<BufferIndexType> buffer_index_type,
                                                                     const class IndexMap* index_map) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

constexpr int64_t kMaxCheckedElements = int64_t{1} << 20;

// What enumerating the buffer's indices under the map found.
struct MapImage {
  std::vector<int64_t> shape;                    // largest image + 1 per new dimension
  std::optional<std::vector<int64_t>> negative;  // the first index mapped below 0
  // Two indices with one image, the earlier (row-major) first.
  std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> collision;
};

std::string show(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

// Every index of `shape` in row-major order, its image, the image's extents and the
// first negative image or collision.
MapImage enumerate_image(const IndexMap& map, const std::vector<int64_t>& shape) {
  MapImage out;
  out.shape.assign(map.num_outputs(), 0);
  int64_t total = 1;
  for (int64_t e : shape) total *= e;
  if (total == 0) return out;
  std::vector<std::vector<int64_t>> images;
  images.reserve(static_cast<size_t>(total));
  std::vector<int64_t> point(shape.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    std::vector<int64_t> image = map.evaluate(point);
    for (size_t d = 0; d < image.size(); ++d) {
      if (image[d] < 0 && !out.negative) out.negative = point;
      out.shape[d] = std::max(out.shape[d], image[d] + 1);
    }
    images.push_back(std::move(image));
    for (size_t d = shape.size(); d-- > 0;) {  // next point, row-major
      if (++point[d] < shape[d]) break;
      point[d] = 0;
    }
  }
  // Collisions: sort the positions by image and compare neighbours.
  std::vector<int64_t> order(static_cast<size_t>(total));
  for (int64_t n = 0; n < total; ++n) order[n] = n;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return images[a] < images[b]; });
  auto unflatten = [&](int64_t n) {
    std::vector<int64_t> p(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      p[d] = n % shape[d];
      n /= shape[d];
    }
    return p;
  };
  for (size_t k = 1; k < order.size(); ++k) {
    if (images[order[k]] == images[order[k - 1]]) {
      int64_t a = std::min(order[k], order[k - 1]), b = std::max(order[k], order[k - 1]);
      out.collision = std::pair{unflatten(a), unflatten(b)};
      break;
    }
  }
  return out;
}

// Rewrites every access of `old_buffer` into `new_buffer` at the mapped indices.
// Indices are simplified knowing the ranges of the enclosing block's iteration
// variables and the loops between it and the access.
class LayoutRewriter : public StmtExprMutator {
 public:
  LayoutRewriter(const Buffer& old_buffer, const Buffer& new_buffer, const IndexMap& map)
      : old_(old_buffer), new_(new_buffer), map_(map) {}

 protected:
  using StmtExprMutator::visit_;

  Expr visit_(const BufferLoadNode* op) override {
    Expr e = ExprMutator::visit_(op);
    const auto* load = e.as<BufferLoadNode>();
    if (!load->buffer.same_as(old_)) return e;
    return BufferLoadNode::make(new_, mapped(load->indices));
  }

  Stmt visit_(const BufferStoreNode* op) override {
    Stmt s = StmtMutator::visit_(op);
    const auto* store = s.as<BufferStoreNode>();
    if (!store->buffer.same_as(old_)) return s;
    return BufferStoreNode::make(new_, store->value, mapped(store->indices));
  }

  Stmt visit_(const ForNode* op) override {
    Analyzer saved = analyzer_;
    analyzer_.bind(op->loop_var, Range{op->min, op->extent});
    Stmt s = StmtMutator::visit_(op);
    analyzer_ = std::move(saved);
    return s;
  }

  Stmt visit_(const BlockNode* op) override {
    // A block sees only its own iteration variables.
    Analyzer saved = analyzer_;
    analyzer_ = Analyzer();
    for (const IterVar& iv : op->iter_vars) analyzer_.bind(iv.var, iv.dom);
    Stmt s = StmtMutator::visit_(op);
    const auto* block = s.as<BlockNode>();
    bool changed = false;
    auto regions = [&](const std::vector<BufferRegion>& in) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : in) {
        if (r.buffer.same_as(old_)) {
          changed = true;
          out.push_back(BufferRegion{new_, mapped_region(r.region)});
        } else {
          out.push_back(r);
        }
      }
      return out;
    };
    std::vector<BufferRegion> reads = regions(block->reads);
    std::vector<BufferRegion> writes = regions(block->writes);
    std::vector<Buffer> allocs;
    for (const Buffer& b : block->alloc_buffers) {
      changed |= b.same_as(old_);
      allocs.push_back(b.same_as(old_) ? new_ : b);
    }
    analyzer_ = std::move(saved);
    if (!changed) return s;
    return BlockNode::make(block->name, block->iter_vars, std::move(reads), std::move(writes), block->body,
                           block->init, std::move(allocs), block->annotations);
  }

 private:
  std::vector<Expr> mapped(const std::vector<Expr>& indices) const {
    std::vector<Expr> out = map_.apply(indices);
    for (Expr& e : out) e = analyzer_.simplify(e);
    return out;
  }

  // The box of new indices covering the image of `region`: a point stays a point; a
  // dimension of the image that varies inside the box gets the base (all offsets 0) plus
  // the bounds of the variation, or the whole new dimension when those are unknown or
  // wider than it.
  std::vector<Range> mapped_region(const std::vector<Range>& region) const {
    Analyzer inner = analyzer_;
    std::vector<Expr> indices;
    std::vector<const VarNode*> offsets;
    std::unordered_map<const VarNode*, Expr> at_zero;
    for (size_t d = 0; d < region.size(); ++d) {
      const Range& r = region[d];
      std::optional<int64_t> extent = as_const_int(r.extent);
      if (extent && *extent == 1) {
        indices.push_back(r.min);
        continue;
      }
      if (!extent) return full(new_);
      Var t(fmt::format("t{}", d), r.min.dtype());
      inner.bind(t, 0, *extent);
      offsets.push_back(t.get());
      at_zero[t.get()] = make_zero(t.dtype());
      indices.push_back(r.min + t);
    }
    std::vector<Expr> image = map_.apply(indices);
    std::vector<Range> out;
    for (size_t d = 0; d < image.size(); ++d) {
      const Expr e = inner.simplify(image[d]);
      const DataType type = e.dtype();
      if (!detail::uses_any_var(e, offsets)) {
        out.push_back(Range{e, make_const(type, 1)});
        continue;
      }
      const Expr base = inner.simplify(detail::substitute_vars(e, at_zero));
      const ConstIntBound bound = inner.const_int_bound(inner.simplify(e - base));
      const int64_t dim = new_->shape[d];
      if (!bound.min || !bound.max || *bound.max - *bound.min + 1 >= dim) {
        out.push_back(Range{make_zero(type), make_const(type, static_cast<double>(dim))});
        continue;
      }
      out.push_back(Range{inner.simplify(base + make_const(type, static_cast<double>(*bound.min))),
                          make_const(type, static_cast<double>(*bound.max - *bound.min + 1))});
    }
    return out;
  }

  static std::vector<Range> full(const Buffer& b) { return BufferRegion::full(b).region; }

  Buffer old_;
  Buffer new_;
  const IndexMap& map_;
  Analyzer analyzer_;
};

}  // namespace

// What transform_layout's construction needs: the buffer and its new shape.
struct detail::TransformLayoutPlan {
  Buffer buffer;
  std::vector<int64_t> shape;
};

detail::Planned<detail::TransformLayoutPlan> Schedule::plan_transform_layout(
    BlockRV block_rv, std::optional<int64_t> buffer_index, std::optional<BufferIndexType> buffer_index_type,
    const IndexMap* index_map) const {
  constexpr InstructionKind kKind = InstructionKind::TransformLayout;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  const BlockNode* block = *found;
  const ErrorLocus here{nullptr, block->name};
  detail::TransformLayoutPlan plan;
  if (!buffer_index || !buffer_index_type) return plan;  // the rest reads the buffer
  const bool is_read = *buffer_index_type == BufferIndexType::kRead;
  const std::vector<BufferRegion>& accesses = is_read ? block->reads : block->writes;
  if (*buffer_index < 0 || *buffer_index >= static_cast<int64_t>(accesses.size())) {
    return error(
        kKind, 1, "IndexOutOfRange", "buffer_index",
        [&] {
          return fmt::format("the index is {}, the block {} {} buffers", *buffer_index, is_read ? "reads" : "writes",
                             accesses.size());
        },
        here);
  }
  const Buffer& buffer = plan.buffer = accesses[*buffer_index].buffer;
  const bool param = std::any_of(func_->params.begin(), func_->params.end(),
                                 [&](const Param& p) { return p.buffer.same_as(buffer); });
  if (param) {
    return error(
        kKind, 2, "ParameterBuffer", [&] { return fmt::format("block {}", rv_name(block_rv)); },
        [&] { return fmt::format("'{}' is a parameter of the function, not an allocated buffer", buffer->name); },
        here);
  }
  if (index_map == nullptr) return plan;  // the rest reads the map
  if (index_map->num_inputs() != static_cast<size_t>(buffer.ndim())) {
    return error(
        kKind, 3, "MapArityMismatch", "index_map",
        [&] {
          return fmt::format("the map takes {} indices, buffer '{}' has {} dimensions", index_map->num_inputs(),
                             buffer->name, buffer.ndim());
        },
        here);
  }
  // A map fusing and permuting whole dimensions is a bijection onto a box, known without
  // enumerating the buffer (reindexed implicit-GEMM operands are that large).
  if (IndexMap::Fusion fusion = index_map->as_fusion(buffer->shape); fusion.problem.empty()) {
    plan.shape = std::move(fusion.shape);
    return plan;
  }
  if (buffer->num_elements() > kMaxCheckedElements) {
    return error(
        kKind, 4, "DomainTooLarge", "index_map",
        [&] {
          return fmt::format("buffer '{}' has {} elements, more than the {} whose images are checked", buffer->name,
                             buffer->num_elements(), kMaxCheckedElements);
        },
        here);
  }
  MapImage image = enumerate_image(*index_map, buffer->shape);
  if (image.negative) {
    return error(
        kKind, 5, "NegativeIndex", "index_map",
        [&] {
          return fmt::format("index {} of '{}' maps to {}", show(*image.negative), buffer->name,
                             show(index_map->evaluate(*image.negative)));
        },
        here);
  }
  if (image.collision) {
    return error(
        kKind, 6, "NotInjective", "index_map",
        [&] {
          return fmt::format("indices {} and {} of '{}' both map to {}", show(image.collision->first),
                             show(image.collision->second), buffer->name,
                             show(index_map->evaluate(image.collision->first)));
        },
        here);
  }
  plan.shape = std::move(image.shape);
  return plan;
}

void Schedule::transform_layout(BlockRV block_rv, int64_t buffer_index, BufferIndexType buffer_index_type,
                                const IndexMap& index_map) {
  constexpr InstructionKind kKind = InstructionKind::TransformLayout;
  const detail::TransformLayoutPlan plan =
      plan_transform_layout(block_rv, buffer_index, buffer_index_type, &index_map).take();
  const Buffer& buffer = plan.buffer;
  const bool is_read = buffer_index_type == BufferIndexType::kRead;
  Buffer laid_out = Buffer::make(buffer->name, buffer->dtype, plan.shape, buffer->scope);
  LayoutRewriter rewriter(buffer, laid_out, index_map);
  PrimFunc result = func_.with_body(rewriter.visit(func_->body));

  commit(std::move(result),
         detail::make_instruction(kKind, {}, block_rv, buffer_index, int64_t{is_read ? 0 : 1}, index_map.to_string(),
                                  /*pad_value=*/None{}, /*assume_injective_transform=*/false));
}

// TVM v0.18: TransformLayout(block, index_map | buffer_index, buffer_index_type, pad_value,
// assume_injective_transform); TVM before v0.12: TransformLayout(block | buffer_index,
// buffer_index_type, index_map), as replay reads them.
CheckResult Schedule::check_transform_layout(const detail::CheckedOperands& ops) const {
  constexpr InstructionKind kKind = InstructionKind::TransformLayout;
  const bool old_layout = ops.complete() && ops.input_count() == 1 && ops.attr_count() == 3;
  std::optional<std::string_view> text;
  if (old_layout) {
    text = ops.string_attr(2);
  } else {
    ops.expect(2, 4);
    if (const Arg* pad = ops.attr(2); pad != nullptr && !pad->is_none()) {
      throw UserError("TransformLayout: only pad_value None is supported");
    }
    ops.bool_attr(3);
    if (const Arg* map = ops.input(1)) text = detail::arg_as<std::string_view>(kKind, *map);
  }
  std::optional<BufferIndexType> type;
  if (auto t = ops.int_attr(1)) {
    if (*t != 0 && *t != 1) {
      throw UserError(fmt::format("TransformLayout: buffer_index_type must be 0 (read) or 1 (write), not {}", *t));
    }
    type = *t == 0 ? BufferIndexType::kRead : BufferIndexType::kWrite;
  }
  std::optional<IndexMap> map;
  if (text) map = IndexMap::parse(std::string(*text));
  auto block = ops.block(0);
  auto index = ops.int_attr(0);
  if (!block) return detail::unknown();
  return detail::verdict(plan_transform_layout(*block, index, type, map ? &*map : nullptr),
                         index && type && map && (old_layout || ops.attr(2) != nullptr), 0);
}

namespace detail {

// TVM v0.18's layout; the map is its lambda text ("lambda i, j: (j, i)").
constexpr auto kTransformLayoutSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::attr("buffer_index", ValueType::kInt),
    slot::attr("buffer_index_type", ValueType::kInt),
    slot::input("index_map", ValueType::kString),
    slot::attr("pad_value", ValueType::kOptionalNumber).defaults_to(None{}),
    slot::attr("assume_injective_transform", ValueType::kBool).defaults_to(false),
});

// pad_value must be None; assume_injective_transform is read but not trusted (injectivity
// is checked anyway).
std::vector<RandomVar> replay_transform_layout(Schedule& sch, const Operands& operands) {
  auto [block, buffer_index, type, map, pad_value, assume_injective] =
      operands.unpack<BlockRV, int64_t, int64_t, std::string_view, Arg, bool>();
  if (!pad_value.is_none()) throw UserError("TransformLayout: only pad_value None is supported");
  if (type != 0 && type != 1) {
    throw UserError(fmt::format("TransformLayout: buffer_index_type must be 0 (read) or 1 (write), not {}", type));
  }
  sch.transform_layout(block, buffer_index,
                       type == 0 ? Schedule::BufferIndexType::kRead : Schedule::BufferIndexType::kWrite,
                       IndexMap::parse(map));
  return {};
}

// TVM before v0.12: TransformLayout(block | buffer_index, buffer_index_type, index_map).
std::optional<Instruction> transform_layout_from_older_tvm(const std::vector<Arg>& inputs,
                                                           const std::vector<Arg>& attrs) {
  if (inputs.size() != 1 || attrs.size() != 3) return std::nullopt;
  return Instruction{InstructionKind::TransformLayout, {inputs[0], attrs[2]},
                     {attrs[0], attrs[1], Arg(None{}), Arg(false)}, {}};
}

constinit const InstructionSignature kTransformLayoutSignature{
    .python_name = "transform_layout",
    .slots = kTransformLayoutSlots,
    .replay = replay_transform_layout,
    .upgrade = transform_layout_from_older_tvm,
    .check = check_method<&Schedule::check_transform_layout>,
};

}  // namespace detail
}  // namespace dragon::schedule
