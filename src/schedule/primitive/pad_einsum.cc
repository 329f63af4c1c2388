// pad_einsum: rounds the iteration domain of an einsum-form block (every index of its
// accesses a bare iteration variable, as a GEMM presented by reindex and
// transform_block_layout is) up to multiples of given paddings, so that a 100 x 60 x 27
// GEMM can be cut into whole 16 x 8 x 16 tensor-core tiles. The intermediate buffers it
// reads grow to the padded extents and their producers (the reindex copies) write zero
// where the original indices are out of range; the buffer it writes grows too, and its
// consumer (the reindex copy back) keeps reading the valid region only. A zero operand
// makes a padded reduction step add zero, which is why only sum reductions whose term is
// a product are accepted.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct PadEinsumPlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Rounds the extent e of each iteration variable of the block up to a multiple of its
  // padding p (ceil(e / p) * p; p = 1 or e % p == 0 leaves it). Each buffer the block
  // accesses along a padded variable gets the padded shape (same name, dtype and scope);
  // the block's loops binding padded variables, and those of the block producing each
  // such read buffer, run over the padded extents; a producer stores
  // select(u0 < e0 && ..., value, 0) so that the padding holds zeros, the sum's identity.
  // Other readers of the buffers (the output's copy back) keep their domains: they read
  // only the valid region. Recorded as TVM does: PadEinsum(block | [p0 p1 ...]).
  // Requires:
  //   1) the block is a leaf block under a scope block (NotLeafBlock)
  //   2) one padding per iteration variable, each in [1, 2^20] (PaddingMismatch)
  //   3) the block is in einsum form: it writes one buffer, every index of every region it
  //      reads or writes is a bare iteration variable (extent 1), and its loads and stores
  //      use those indices (NotEinsum)
  //   4) with reduction variables, its body is C[..] = C[..] + term, and for each padded
  //      reduction variable the term is a product one of whose factors (through casts)
  //      loads a buffer at that variable, so that a padded step adds zero (NonSumReduction)
  //   5) if a variable grows, the realization has no predicate, and each growing variable
  //      has a domain starting at 0 and is bound to a loop of its own (starting at 0, of
  //      the variable's extent, holding no other block) (NonTrivialBinding)
  //   6) each buffer accessed along a padded variable is allocated by the scope block, not
  //      a parameter of the function (reindex it first), and the block spans each of its
  //      padded dimensions (NotIntermediate)
  //   7) each such read buffer is written by exactly one other block of the scope, a
  //      spatial block without init storing it once at its distinct iteration variables,
  //      each padded one bound as in 5); no other block writes the block's padded output
  //      (UnsupportedProducer).
  void pad_einsum(BlockRV block, const std::vector<int64_t>& padding);
  CheckResult check_pad_einsum(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::PadEinsumPlan> plan_pad_einsum(BlockRV block,
                                                         const std::vector<int64_t>* padding) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

// What pad_einsum's construction needs.
struct detail::PadEinsumPlan {
  // A block whose iteration domain grows: the new extent per iteration variable, and the
  // guard of a producer (position, old extent) per padded variable.
  struct Grown {
    std::vector<int64_t> extents;
    std::vector<std::pair<size_t, int64_t>> guards;
  };
  const BlockNode* block = nullptr;
  std::unordered_map<const BlockNode*, Grown> blocks;    // the block and its producers
  std::unordered_map<const ForNode*, int64_t> loops;     // loop -> new extent
  std::unordered_map<const BufferNode*, Buffer> padded;  // buffer -> its padded version
};

namespace {

constexpr int64_t kPadEinsumMaxPadding = int64_t{1} << 20;

// Every index list the block uses to load or store `buffer`.
struct PadEinsumAccessScan : public StmtExprVisitor {
  explicit PadEinsumAccessScan(const BufferNode* buffer) : buffer_(buffer) {}
  std::vector<std::vector<Expr>> accesses;

 protected:
  using StmtExprVisitor::visit_;
  void visit_(const BufferLoadNode* op) override {
    if (op->buffer.get() == buffer_) accesses.push_back(op->indices);
    StmtExprVisitor::visit_(op);
  }
  void visit_(const BufferStoreNode* op) override {
    if (op->buffer.get() == buffer_) accesses.push_back(op->indices);
    StmtExprVisitor::visit_(op);
  }

 private:
  const BufferNode* buffer_;
};

// The loops grown, the grown blocks' domains and producer guards (buffers are replaced
// afterwards, by replace_buffers).
class PadEinsumRewriter : public StmtMutator {
 public:
  explicit PadEinsumRewriter(const detail::PadEinsumPlan& plan) : plan_(plan) {}

 protected:
  using StmtMutator::visit_;
  Stmt visit_(const ForNode* op) override {
    Stmt s = StmtMutator::visit_(op);
    auto grown = plan_.loops.find(op);
    if (grown == plan_.loops.end()) return s;
    const auto* loop = s.as<ForNode>();
    return ForNode::make(loop->loop_var, loop->min, make_const(loop->extent.dtype(), static_cast<double>(grown->second)),
                         loop->for_kind, loop->body, loop->thread_tag, loop->annotations);
  }
  Stmt visit_(const BlockRealizeNode* op) override {
    auto grown = plan_.blocks.find(op->block.get());
    if (grown == plan_.blocks.end()) return StmtMutator::visit_(op);
    const BlockNode* b = op->block.get();
    std::vector<IterVar> iters = b->iter_vars;
    for (size_t p = 0; p < iters.size(); ++p) {
      iters[p].dom.extent = make_const(iters[p].dom.extent.dtype(), static_cast<double>(grown->second.extents[p]));
    }
    Stmt body = b->body;
    if (!grown->second.guards.empty()) {
      // A producer: one store (the plan checked it); zero outside the original domain.
      const auto* store = body.as<BufferStoreNode>();
      Expr inside;
      for (const auto& [p, extent] : grown->second.guards) {
        const Var& v = b->iter_vars[p].var;
        Expr in = v < make_const(v.dtype(), static_cast<double>(extent));
        inside = inside.defined() ? (inside && in) : in;
      }
      body = BufferStoreNode::make(store->buffer, select(inside, store->value, make_zero(store->value.dtype())),
                                   store->indices);
    }
    Block block = BlockNode::make(b->name, std::move(iters), b->reads, b->writes, body, b->init, b->alloc_buffers,
                                  b->annotations);
    return BlockRealizeNode::make(op->iter_values, op->predicate, std::move(block));
  }

 private:
  const detail::PadEinsumPlan& plan_;
};

std::string pad_einsum_show(const std::vector<Expr>& indices) {
  std::vector<std::string> parts;
  for (const Expr& e : indices) parts.push_back(print_expr(e));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// The position of `e` among the block's iteration variables when it is one of them.
std::optional<size_t> pad_einsum_iter_position(const BlockNode* block, const Expr& e) {
  for (size_t p = 0; p < block->iter_vars.size(); ++p) {
    if (block->iter_vars[p].var.same_as(e)) return p;
  }
  return std::nullopt;
}

// Whether one factor of the product `term` (through casts) loads a buffer at `var`.
bool pad_einsum_factor_uses(const Expr& term, const VarNode* var) {
  if (const auto* mul = term.as<MulNode>()) {
    return pad_einsum_factor_uses(mul->a, var) || pad_einsum_factor_uses(mul->b, var);
  }
  if (const auto* c = term.as<CastNode>()) return pad_einsum_factor_uses(c->value, var);
  if (const auto* load = term.as<BufferLoadNode>()) {
    return std::any_of(load->indices.begin(), load->indices.end(), [&](const Expr& i) { return i.get() == var; });
  }
  return false;
}

}  // namespace

detail::Planned<detail::PadEinsumPlan> Schedule::plan_pad_einsum(BlockRV block_rv,
                                                                 const std::vector<int64_t>* padding) const {
  constexpr InstructionKind kKind = InstructionKind::PadEinsum;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  detail::PadEinsumPlan plan;
  const BlockNode* block = plan.block = *found;
  auto operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus here{nullptr, block->name};
  const BlockTree::BlockInfo* info = tree_->find(block);
  if (!info->leaf || info->scope == nullptr) {
    return error(kKind, 1, "NotLeafBlock", operand,
                 info->leaf ? "the block is the root block" : "the block has blocks inside it", here);
  }
  const BlockNode* scope = info->scope;
  const size_t n = block->iter_vars.size();
  if (padding != nullptr) {
    if (padding->size() != n) {
      return error(
          kKind, 2, "PaddingMismatch", "padding",
          [&] { return fmt::format("{} paddings for the {} iteration variables of '{}'", padding->size(), n, block->name); },
          here);
    }
    for (int64_t p : *padding) {
      // The bound keeps the rounded extents far from overflow (and i32 loops in range).
      if (p < 1 || p > kPadEinsumMaxPadding) {
        return error(
            kKind, 2, "PaddingMismatch", "padding",
            [&] { return fmt::format("padding {} is not in [1, {}]", p, kPadEinsumMaxPadding); }, here);
      }
    }
  }

  // 3) einsum form.
  auto not_einsum = [&](auto reason) { return error(kKind, 3, "NotEinsum", operand, reason, here); };
  if (block->writes.size() != 1) {
    return not_einsum([&] { return fmt::format("the block writes {} buffers, not one", block->writes.size()); });
  }
  std::vector<const BufferRegion*> regions;
  for (const BufferRegion& r : block->reads) regions.push_back(&r);
  regions.push_back(&block->writes[0]);
  for (const BufferRegion* r : regions) {
    std::vector<Expr> at;
    for (const Range& range : r->region) {
      if (!pad_einsum_iter_position(block, range.min) || !is_const_int(range.extent, 1)) {
        return not_einsum([&] {
          return fmt::format("the block accesses '{}' at {} +: {}: each index must be a bare iteration variable",
                             r->buffer->name, print_expr(range.min), print_expr(range.extent));
        });
      }
      at.push_back(range.min);
    }
    PadEinsumAccessScan scan(r->buffer.get());
    scan.visit(block->body);
    if (block->init.defined()) scan.visit(block->init);
    for (const std::vector<Expr>& a : scan.accesses) {
      bool same = a.size() == at.size();
      for (size_t d = 0; same && d < a.size(); ++d) same = a[d].same_as(at[d]);
      if (!same) {
        return not_einsum([&] {
          return fmt::format("the block accesses '{}' at {}, its region at {}", r->buffer->name, pad_einsum_show(a),
                             pad_einsum_show(at));
        });
      }
    }
  }
  const Buffer& output = block->writes[0].buffer;

  // 4) a sum whose padded steps add zero.
  const bool reduces = std::any_of(block->iter_vars.begin(), block->iter_vars.end(),
                                   [](const IterVar& iv) { return iv.kind == IterKind::kReduce; });
  Expr term;
  if (reduces) {
    const auto* store = block->body.as<BufferStoreNode>();
    const auto* add = store != nullptr ? store->value.as<AddNode>() : nullptr;
    auto is_self = [&](const Expr& e) {
      const auto* load = e.as<BufferLoadNode>();
      return load != nullptr && load->buffer.same_as(store->buffer);
    };
    if (add != nullptr && store->buffer.same_as(output)) {
      if (is_self(add->a)) term = add->b;
      else if (is_self(add->b)) term = add->a;
    }
    if (!term.defined()) {
      return error(
          kKind, 4, "NonSumReduction", operand,
          [&] {
            return fmt::format("the update is not {0}[..] = {0}[..] + term: padding adds steps, and only zero, the "
                               "sum's identity, leaves a reduction unchanged",
                               output->name);
          },
          here);
    }
  }
  if (padding == nullptr) return plan;  // the rest reads the paddings

  std::vector<int64_t> extents(n);
  std::vector<bool> grows(n, false);
  for (size_t p = 0; p < n; ++p) {
    const IterVar& iv = block->iter_vars[p];
    const std::optional<int64_t> extent = as_const_int(iv.dom.extent);
    const int64_t pad = (*padding)[p];
    if (!extent) {
      return error(
          kKind, 5, "NonTrivialBinding", operand,
          [&] { return fmt::format("the extent of '{}' is not a constant", iv.var.name()); }, here);
    }
    extents[p] = (*extent + pad - 1) / pad * pad;
    grows[p] = extents[p] != *extent;
    if (grows[p] && iv.kind == IterKind::kReduce && !pad_einsum_factor_uses(term, iv.var.get())) {
      return error(
          kKind, 4, "NonSumReduction", operand,
          [&] {
            return fmt::format("the term {} is not a product with a factor loaded at '{}': the padded steps would not "
                               "add zero",
                               print_expr(term), iv.var.name());
          },
          here);
    }
  }

  // 5) the padded variables' loops can grow: a loop each, holding nothing else. Shared by
  // the block and its producers.
  auto grow_loops = [&](const BlockTree::BlockInfo* at, const std::vector<int64_t>& new_extents,
                        const std::string& role) -> std::optional<ScheduleError> {
    const BlockNode* b = at->block;
    const int k = b == block ? 5 : 7;
    const std::string name = b == block ? "NonTrivialBinding" : "UnsupportedProducer";
    auto refuse = [&](auto reason) {
      return error(kKind, k, name, operand, [&] { return role + detail::text_of(reason); }, ErrorLocus{nullptr, b->name});
    };
    const std::span<const ForNode* const> loops = at->scope_loops();
    for (size_t p = 0; p < b->iter_vars.size(); ++p) {
      const IterVar& iv = b->iter_vars[p];
      const std::optional<int64_t> extent = as_const_int(iv.dom.extent);
      if (extent && *extent == new_extents[p]) continue;
      // A predicate would have to be extended too; a block that does not grow keeps it.
      if (at->realize->predicate.defined() && !is_const_int(at->realize->predicate, 1)) {
        return refuse([&] { return fmt::format(" runs under the predicate {}", print_expr(at->realize->predicate)); });
      }
      if (!is_const_int(iv.dom.min, 0)) {
        return refuse([&] { return fmt::format(": the domain of '{}' does not start at 0", iv.var.name()); });
      }
      const Expr& value = at->realize->iter_values[p];
      auto loop = std::find_if(loops.begin(), loops.end(), [&](const ForNode* l) { return l->loop_var.same_as(value); });
      if (loop == loops.end()) {
        return refuse([&] {
          return fmt::format(": '{}' is bound to {}, not to a loop of its own", iv.var.name(), print_expr(value));
        });
      }
      const ForNode* l = *loop;
      bool shared = false;
      for (size_t q = 0; q < b->iter_vars.size(); ++q) {
        shared |= q != p && detail::uses_any_var(at->realize->iter_values[q], {l->loop_var.get()});
      }
      const std::vector<const BlockRealizeNode*> inside = detail::child_block_realizes(Stmt(l));
      if (shared || !is_const_int(l->min, 0) || !is_const_int(l->extent, *extent) || inside.size() != 1) {
        return refuse([&] {
          return fmt::format(": loop '{}' ({} +: {}) is not a loop over the {} values of '{}' alone, holding only the "
                             "block",
                             l->loop_var.name(), print_expr(l->min), print_expr(l->extent), *extent, iv.var.name());
        });
      }
      plan.loops[l] = new_extents[p];
    }
    return std::nullopt;
  };
  if (auto refused = grow_loops(info, extents, "the block")) return std::move(*refused);
  plan.blocks[block].extents = extents;

  // 6) the buffers along padded variables, intermediates of the scope.
  for (const BufferRegion* r : regions) {
    const Buffer& buffer = r->buffer;
    if (plan.padded.count(buffer.get()) != 0) continue;
    std::vector<int64_t> shape = buffer->shape;
    bool changed = false;
    for (size_t d = 0; d < r->region.size(); ++d) {
      const size_t p = *pad_einsum_iter_position(block, r->region[d].min);
      if (!grows[p]) continue;
      changed = true;
      if (buffer->shape[d] != *as_const_int(block->iter_vars[p].dom.extent)) {
        return error(
            kKind, 6, "NotIntermediate", operand,
            [&] {
              return fmt::format("dimension {} of '{}' has {} elements, '{}' spans {}", d, buffer->name,
                                 buffer->shape[d], block->iter_vars[p].var.name(),
                                 print_expr(block->iter_vars[p].dom.extent));
            },
            here);
      }
      shape[d] = extents[p];
    }
    if (!changed) continue;
    const bool allocated = std::any_of(scope->alloc_buffers.begin(), scope->alloc_buffers.end(),
                                       [&](const Buffer& b) { return b.same_as(buffer); });
    if (!allocated) {
      const bool param = std::any_of(func_->params.begin(), func_->params.end(),
                                     [&](const Param& p) { return p.buffer.same_as(buffer); });
      return error(
          kKind, 6, "NotIntermediate", operand,
          [&] {
            return fmt::format("'{}' {}: reindex it first (reindex copies it into an intermediate the padding can grow)",
                               buffer->name,
                               param ? "is a parameter of the function" : "is not allocated by the scope block");
          },
          here);
    }
    plan.padded[buffer.get()] = Buffer::make(buffer->name, buffer->dtype, shape, buffer->scope);
  }

  // 7) producers that can write the padding, and no other writer of the output.
  for (const auto& [buffer, fresh] : plan.padded) {
    const bool is_output = buffer == output.get();
    const BlockTree::BlockInfo* producer = nullptr;
    size_t writers = 0;
    for (const BlockTree::BlockInfo& other : tree_->blocks()) {
      if (other.block == block || !other.leaf || !tree_->encloses(scope, other.block) ||
          !detail::has_buffer(other.block->writes, buffer)) {
        continue;
      }
      ++writers;
      producer = &other;
    }
    auto refuse = [&](const std::string& reason, const BlockNode* at) {
      return error(kKind, 7, "UnsupportedProducer", operand, reason, ErrorLocus{nullptr, at->name});
    };
    if (is_output) {
      if (writers != 0) {
        return refuse(fmt::format("block '{}' also writes '{}', which the padding grows", producer->block->name,
                                  buffer->name),
                      producer->block);
      }
      continue;
    }
    if (writers != 1) {
      return refuse(fmt::format("{} blocks of the scope write '{}': the padding needs one producer to zero it",
                                writers, buffer->name),
                    block);
    }
    const BlockNode* b = producer->block;
    const auto* store = b->body.as<BufferStoreNode>();
    const bool spatial = std::all_of(b->iter_vars.begin(), b->iter_vars.end(),
                                     [](const IterVar& iv) { return iv.kind == IterKind::kSpatial; });
    if (!spatial || b->init.defined() || store == nullptr || store->buffer.get() != buffer || b->writes.size() != 1 ||
        store->indices.size() != b->iter_vars.size()) {
      return refuse(fmt::format("the producer '{}' of '{}' is not a spatial block storing it once at each of its "
                                "iteration variables",
                                b->name, buffer->name),
                    b);
    }
    detail::PadEinsumPlan::Grown grown;
    for (const IterVar& iv : b->iter_vars) grown.extents.push_back(as_const_int(iv.dom.extent).value_or(-1));
    std::vector<bool> seen(b->iter_vars.size(), false);
    for (size_t d = 0; d < store->indices.size(); ++d) {
      const std::optional<size_t> p = pad_einsum_iter_position(b, store->indices[d]);
      if (!p || seen[*p] || grown.extents[*p] != buffer->shape[d]) {
        return refuse(fmt::format("the producer '{}' stores '{}' at {}: each index must be a distinct iteration "
                                  "variable spanning its dimension",
                                  b->name, buffer->name, pad_einsum_show(store->indices)),
                      b);
      }
      seen[*p] = true;
      if (fresh->shape[d] != buffer->shape[d]) {
        grown.extents[*p] = fresh->shape[d];
        grown.guards.emplace_back(*p, buffer->shape[d]);
      }
    }
    if (auto refused = grow_loops(producer, grown.extents, fmt::format("the producer '{}' of '{}'", b->name,
                                                                       buffer->name))) {
      return std::move(*refused);
    }
    plan.blocks[b] = std::move(grown);
  }
  return plan;
}

void Schedule::pad_einsum(BlockRV block_rv, const std::vector<int64_t>& padding) {
  constexpr InstructionKind kKind = InstructionKind::PadEinsum;
  const detail::PadEinsumPlan plan = plan_pad_einsum(block_rv, &padding).take();
  PrimFunc result = func_;
  if (!plan.loops.empty() || !plan.padded.empty()) {
    PadEinsumRewriter rewriter(plan);
    Stmt body = detail::replace_buffers(rewriter.visit(func_->body), plan.padded);
    result = func_.with_body(std::move(body));
  }
  commit(std::move(result), detail::make_instruction(kKind, {}, block_rv, padding));
}

CheckResult Schedule::check_pad_einsum(const detail::CheckedOperands& ops) const {
  ops.expect(1, 1);
  std::optional<std::vector<int64_t>> padding;
  if (const Arg* a = ops.attr(0)) padding = detail::list_as<int64_t>(ops.kind(), *a);
  auto block = ops.block(0);
  if (!block) return detail::unknown();
  return detail::verdict(plan_pad_einsum(*block, padding ? &*padding : nullptr), padding.has_value(), 0);
}

namespace detail {

// TVM's layout: the paddings are one attr, a list of integers.
constexpr auto kPadEinsumSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::list_attr("padding", ValueType::kInt),
});

std::vector<RandomVar> replay_pad_einsum(Schedule& sch, const Operands& operands) {
  auto [block, padding] = operands.unpack<BlockRV, std::vector<int64_t>>();
  sch.pad_einsum(block, padding);
  return {};
}

constinit const InstructionSignature kPadEinsumSignature{
    .python_name = "pad_einsum",
    .slots = kPadEinsumSlots,
    .replay = replay_pad_einsum,
    .check = check_method<&Schedule::check_pad_einsum>,
};

}  // namespace detail
}  // namespace dragon::schedule
