// transform_block_layout: rewrites a block's iteration space by an IndexMap that fuses and
// permutes its iteration variables (IndexMap::as_fusion), with a new loop nest over the
// new variables. A conv block (n, oc, oh, ow, rc, kh, kw) under
// "lambda n, oc, oh, ow, rc, kh, kw: (n * OH * OW + oh * OW + ow, oc, rc * KH * KW + kh * KW + kw)"
// becomes a 3-loop GEMM block (m, oc, k); with its operands reindexed (reindex.cc) and laid
// out by the same map (transform_layout.cc), it reads A[m, k] and B[oc, k] and writes C[m, oc].
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "dragon/ir/structural_equal.h"
#include "dragon/schedule/index_map.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct TransformBlockLayoutPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Replaces the block's iteration variables v by u = index_map(v), one per result of the
  // map (named by the variables it fuses, joined by '_'), each of the kind of the
  // variables it fuses and of the extent the fusion gives; the loops binding v are
  // replaced by one loop per u (named l_<u>), bound trivially, and every use of v in the
  // block becomes the inverse of the map (u // c % e), except that an index equal to a
  // result of the map, as reindexed and laid-out buffers have, becomes that u directly.
  // The block keeps its name. Recorded as TVM does: TransformBlockLayout(block |
  // "lambda ...").
  // Requires:
  //   1) the block is a leaf block under a scope block (NotLeafBlock)
  //   2) the map has one parameter per iteration variable (MapArityMismatch)
  //   3) the innermost loops above the block, one per iteration variable, are serial and
  //      unannotated (the new loops replace them), start at 0, hold nothing but the next loop (the innermost the block), and each
  //      binds one iteration variable of its extent, whose domain starts at 0; the
  //      realization has no predicate (NonTrivialBinding)
  //   4) the map fuses and permutes whole iteration variables, a bijection of the
  //      iteration space onto a box (NotBijective, with IndexMap::as_fusion's reason)
  //   5) each result fuses iteration variables of one kind, and some result has the
  //      block's reduction variables if it has any (MixedIterKinds).
  void transform_block_layout(BlockRV block, const class IndexMap& index_map);
  CheckResult check_transform_block_layout(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::TransformBlockLayoutPlan> plan_transform_block_layout(BlockRV block,
                                                                                const class IndexMap* index_map) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

// What transform_block_layout's construction needs.
struct detail::TransformBlockLayoutPlan {
  const BlockNode* block = nullptr;
  const ForNode* outermost = nullptr;  // the outermost loop replaced
  IndexMap::Fusion fusion;
  std::vector<IterKind> kinds;  // per result
};

namespace {

// Replaces each index (of loads, stores and region starts) equal to one of `results` by
// its new variable; leaves every other expression alone.
class ResultMatcher : public StmtExprMutator {
 public:
  ResultMatcher(const std::vector<Expr>& results, const std::vector<Var>& vars) : results_(results), vars_(vars) {}

  std::vector<BufferRegion> regions(const std::vector<BufferRegion>& in) {
    std::vector<BufferRegion> out;
    for (const BufferRegion& r : in) {
      std::vector<Range> region;
      for (const Range& range : r.region) region.push_back(Range{matched(range.min), range.extent});
      out.push_back(BufferRegion{r.buffer, std::move(region)});
    }
    return out;
  }

 protected:
  using StmtExprMutator::visit_;
  Expr visit_(const BufferLoadNode* op) override {
    Expr e = ExprMutator::visit_(op);
    const auto* load = e.as<BufferLoadNode>();
    return BufferLoadNode::make(load->buffer, matched(load->indices));
  }
  Stmt visit_(const BufferStoreNode* op) override {
    Stmt s = StmtMutator::visit_(op);
    const auto* store = s.as<BufferStoreNode>();
    return BufferStoreNode::make(store->buffer, store->value, matched(store->indices));
  }

 private:
  Expr matched(const Expr& e) const {
    for (size_t r = 0; r < results_.size(); ++r) {
      if (structural_equal(e, results_[r])) return e.dtype() == vars_[r].dtype() ? Expr(vars_[r]) : cast(e.dtype(), vars_[r]);
    }
    return e;
  }
  std::vector<Expr> matched(const std::vector<Expr>& indices) const {
    std::vector<Expr> out;
    for (const Expr& e : indices) out.push_back(matched(e));
    return out;
  }

  const std::vector<Expr>& results_;
  const std::vector<Var>& vars_;
};

std::string new_var_name(const std::vector<IterVar>& iters, const std::vector<size_t>& sources, size_t r) {
  if (sources.empty()) return fmt::format("u{}", r);
  std::string name;
  for (size_t p : sources) name += (name.empty() ? "" : "_") + iters[p].var.name();
  return name;
}

}  // namespace

detail::Planned<detail::TransformBlockLayoutPlan> Schedule::plan_transform_block_layout(
    BlockRV block_rv, const IndexMap* index_map) const {
  constexpr InstructionKind kKind = InstructionKind::TransformBlockLayout;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  detail::TransformBlockLayoutPlan plan;
  const BlockNode* block = plan.block = *found;
  auto operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus here{nullptr, block->name};
  const BlockTree::BlockInfo* info = tree_->find(block);
  if (!info->leaf || info->scope == nullptr) {
    return error(kKind, 1, "NotLeafBlock", operand,
                 info->leaf ? "the block is the root block" : "the block has blocks inside it", here);
  }
  const size_t n = block->iter_vars.size();
  if (index_map != nullptr && index_map->num_inputs() != n) {
    return error(
        kKind, 2, "MapArityMismatch", "index_map",
        [&] {
          return fmt::format("the map takes {} indices, block '{}' has {} iteration variables",
                             index_map->num_inputs(), block->name, n);
        },
        here);
  }
  auto not_trivial = [&](auto reason) { return error(kKind, 3, "NonTrivialBinding", operand, reason, here); };
  const std::span<const ForNode* const> loops = info->scope_loops();
  if (loops.size() < n) {
    return not_trivial([&] { return fmt::format("{} loops for {} iteration variables", loops.size(), n); });
  }
  if (info->realize->predicate.defined() && !is_const_int(info->realize->predicate, 1)) {
    return not_trivial(
        [&] { return fmt::format("the block runs under the predicate {}", print_expr(info->realize->predicate)); });
  }
  const std::span<const ForNode* const> bound = loops.subspan(loops.size() - n);
  std::vector<int64_t> extents;
  std::vector<bool> taken(n, false);
  for (size_t p = 0; p < n; ++p) {
    const IterVar& iv = block->iter_vars[p];
    const Expr& value = info->realize->iter_values[p];
    const std::optional<int64_t> extent = as_const_int(iv.dom.extent);
    if (!is_const_int(iv.dom.min, 0) || !extent) {
      return not_trivial([&] { return fmt::format("the domain of '{}' does not start at 0", iv.var.name()); });
    }
    extents.push_back(*extent);
    size_t l = 0;
    while (l < n && !bound[l]->loop_var.same_as(value)) ++l;
    if (l == n || taken[l]) {
      return not_trivial([&] {
        return fmt::format("'{}' is bound to {}, not to a loop of its own among the innermost {}", iv.var.name(),
                           print_expr(value), n);
      });
    }
    taken[l] = true;
    const ForNode* loop = bound[l];
    if (!is_const_int(loop->min, 0) || !is_const_int(loop->extent, *extent) || loop->for_kind != ForKind::kSerial ||
        !loop->annotations.empty()) {
      return not_trivial([&] {
        return fmt::format("loop '{}' ({} +: {}, {}{}) is not a plain serial loop over the {} values of '{}'",
                           loop->loop_var.name(), print_expr(loop->min), print_expr(loop->extent),
                           for_kind_name(loop->for_kind), loop->annotations.empty() ? "" : ", annotated", *extent,
                           iv.var.name());
      });
    }
  }
  for (size_t l = 0; l < n; ++l) {
    const Stmt& body = bound[l]->body;
    const StmtNode* next = l + 1 < n ? static_cast<const StmtNode*>(bound[l + 1]) : info->realize;
    if (body.get() != next) {
      return not_trivial([&] {
        return fmt::format("loop '{}' holds more than {}", bound[l]->loop_var.name(),
                           l + 1 < n ? fmt::format("loop '{}'", bound[l + 1]->loop_var.name()) : "the block");
      });
    }
  }
  plan.outermost = n > 0 ? bound[0] : nullptr;
  if (index_map == nullptr) return plan;  // the rest reads the map

  std::vector<std::string> names;
  IndexMap::Fusion shape_only = index_map->as_fusion(extents);
  for (size_t r = 0; r < shape_only.sources.size(); ++r) {
    const std::vector<size_t>& named = shape_only.sources[r].empty() ? shape_only.mentions[r] : shape_only.sources[r];
    names.push_back(new_var_name(block->iter_vars, named, r));
  }
  const DataType type = n > 0 ? block->iter_vars[0].var.dtype() : DataType::i32();
  plan.fusion = index_map->as_fusion(extents, names, type);
  if (!plan.fusion.problem.empty()) {
    return error(
        kKind, 4, "NotBijective", "index_map",
        [&] { return fmt::format("over the extents [{}]: {}", fmt::join(extents, ", "), plan.fusion.problem); }, here);
  }
  // Each result takes the kind of the variables it mentions (those of extent 1 too, so a
  // reduction of extent 1 keeps its reduce variable for its init); a constant result is
  // spatial.
  bool keeps_reduce = false;
  for (size_t r = 0; r < plan.fusion.mentions.size(); ++r) {
    const std::vector<size_t>& mentions = plan.fusion.mentions[r];
    const IterKind kind = mentions.empty() ? IterKind::kSpatial : block->iter_vars[mentions.front()].kind;
    for (size_t p : mentions) {
      if (block->iter_vars[p].kind != kind) {
        return error(
            kKind, 5, "MixedIterKinds", "index_map",
            [&] {
              return fmt::format("result {} fuses '{}' ({}) and '{}' ({})", r,
                                 block->iter_vars[mentions.front()].var.name(), iter_kind_name(kind),
                                 block->iter_vars[p].var.name(), iter_kind_name(block->iter_vars[p].kind));
            },
            here);
      }
    }
    keeps_reduce |= kind == IterKind::kReduce;
    plan.kinds.push_back(kind);
  }
  const auto reduce = std::find_if(block->iter_vars.begin(), block->iter_vars.end(),
                                   [](const IterVar& iv) { return iv.kind == IterKind::kReduce; });
  if (reduce != block->iter_vars.end() && !keeps_reduce) {
    return error(
        kKind, 5, "MixedIterKinds", "index_map",
        [&] { return fmt::format("no result keeps a reduction variable ('{}' is one)", reduce->var.name()); }, here);
  }
  return plan;
}

void Schedule::transform_block_layout(BlockRV block_rv, const IndexMap& index_map) {
  constexpr InstructionKind kKind = InstructionKind::TransformBlockLayout;
  const detail::TransformBlockLayoutPlan plan = plan_transform_block_layout(block_rv, &index_map).take();
  const BlockNode* block = plan.block;
  const IndexMap::Fusion& fusion = plan.fusion;

  // The map's results over the old variables, as an index of a laid-out buffer spells
  // them (transform_layout simplifies with the block's domains bound).
  std::vector<Expr> old_vars;
  Analyzer old_ranges;
  for (const IterVar& iv : block->iter_vars) {
    old_vars.push_back(iv.var);
    old_ranges.bind(iv.var, iv.dom);
  }
  std::vector<Expr> results;
  for (const Expr& e : index_map.apply(old_vars)) results.push_back(old_ranges.simplify(e));

  std::vector<IterVar> iters;
  for (size_t r = 0; r < fusion.new_params.size(); ++r) {
    const Var& u = fusion.new_params[r];
    iters.push_back(IterVar{u, Range{make_zero(u.dtype()), make_const(u.dtype(), static_cast<double>(fusion.shape[r]))},
                            plan.kinds[r]});
  }
  ResultMatcher matcher(results, fusion.new_params);
  VarMap inverse;
  for (size_t p = 0; p < block->iter_vars.size(); ++p) inverse[block->iter_vars[p].var.get()] = fusion.inverse[p];
  auto rewrite = [&](const Stmt& s) { return s.defined() ? detail::substitute_vars(matcher.visit(s), inverse) : s; };
  auto rewrite_regions = [&](const std::vector<BufferRegion>& in) {
    std::vector<BufferRegion> out;
    for (BufferRegion r : matcher.regions(in)) {
      for (Range& range : r.region) range.min = detail::substitute_vars(range.min, inverse);
      out.push_back(std::move(r));
    }
    return out;
  };
  Block rewritten = BlockNode::make(block->name, iters, rewrite_regions(block->reads), rewrite_regions(block->writes),
                                    rewrite(block->body), rewrite(block->init), block->alloc_buffers,
                                    block->annotations);
  // Simplify the inverse where it remained (u // c % e forms) knowing the new domains.
  Stmt simplified = ir::simplify(Stmt(rewritten));

  std::vector<Var> loops;
  std::vector<Expr> bindings;
  for (size_t r = 0; r < iters.size(); ++r) {
    Var l(fmt::format("l_{}", iters[r].var.name()), iters[r].var.dtype());
    loops.push_back(l);
    bindings.push_back(l);
  }
  Stmt nest = BlockRealizeNode::make(bindings, Expr(), Block(simplified.as<BlockNode>()));
  for (size_t r = loops.size(); r-- > 0;) {
    nest = ForNode::make(loops[r], make_zero(loops[r].dtype()), iters[r].dom.extent, ForKind::kSerial, nest);
  }
  const StmtNode* replaced = plan.outermost != nullptr ? static_cast<const StmtNode*>(plan.outermost)
                                                       : static_cast<const StmtNode*>(tree_->find(block)->realize);
  PrimFunc result = detail::replace_in_func(func_, replaced, nest);
  commit(std::move(result), detail::make_instruction(kKind, {}, block_rv, index_map.to_string()));
}

CheckResult Schedule::check_transform_block_layout(const detail::CheckedOperands& ops) const {
  ops.expect(1, 1);
  std::optional<IndexMap> map;
  if (auto text = ops.string_attr(0)) map = IndexMap::parse(std::string(*text));
  auto block = ops.block(0);
  if (!block) return detail::unknown();
  return detail::verdict(plan_transform_block_layout(*block, map ? &*map : nullptr), map.has_value(), 0);
}

namespace detail {

// TVM's layout: the map is an attr, its lambda text.
constexpr auto kTransformBlockLayoutSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::attr("index_map", ValueType::kString),
});

std::vector<RandomVar> replay_transform_block_layout(Schedule& sch, const Operands& operands) {
  auto [block, map] = operands.unpack<BlockRV, std::string_view>();
  sch.transform_block_layout(block, IndexMap::parse(map));
  return {};
}

constinit const InstructionSignature kTransformBlockLayoutSignature{
    .python_name = "transform_block_layout",
    .slots = kTransformBlockLayoutSlots,
    .replay = replay_transform_block_layout,
    .check = check_method<&Schedule::check_transform_block_layout>,
};

}  // namespace detail
}  // namespace dragon::schedule
