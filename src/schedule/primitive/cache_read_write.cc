// cache_read and cache_write: a copy of a buffer in another storage scope, made by a new
// block with its own loop nest at the level of the scope block (compute_at moves it
// later); the consumers read, or the block writes, the copy. Also set_scope, which only
// moves an allocated buffer to another scope.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../instruction_check.h"
#include "../ir_tree.h"

// ---- Members of class Schedule: these blocks are compiled in include/dragon/schedule/
// schedule.h (gathered by src/schedule/gather_schedule_members.cc), not here. ----
#ifdef DRAGON_SCHEDULE_DETAIL_DECLARATIONS
struct CachePlan;
#endif
#ifdef DRAGON_SCHEDULE_PUBLIC_MEMBERS
  // Reads buffer `reads[read_buffer_index]` of the block through a copy in
  // `storage_scope`: a new block (named <buffer>_<scope>, made unique) with its own loop
  // nest over the whole buffer, placed first in the scope block or right after the
  // statement of the buffer's writer there, copies it into a new buffer of that name
  // allocated in the scope block; the consumers (default: the block) read the copy.
  // Returns the new block.
  // Requires:
  //   1) the index is one of the block's reads (IndexOutOfRange)
  //   2) the scope is a storage scope: global, shared, shared.dyn, local, warp,
  //      wmma.matrix_a/b, wmma.accumulator (InvalidScope)
  //   3) every consumer is a leaf block of the block's scope that reads the buffer and
  //      does not write it (NotAConsumer)
  //   4) at most one block of the scope writes the buffer, in a statement of the scope
  //      before those of the consumers (NotSingleWriter).
  BlockRV cache_read(BlockRV block, int64_t read_buffer_index, std::string storage_scope,
                     std::vector<BlockRV> consumer_blocks = {});
  // Makes the block write buffer `writes[write_buffer_index]` into a new buffer of
  // `storage_scope` (named <buffer>_<scope>, made unique, allocated in the scope block;
  // its init and its own loads follow), and adds a block of that name, with its own
  // loop nest right after the block's statement in the scope, copying the region written
  // back into the buffer. Returns the new block.
  // Requires:
  //   1) the index is one of the block's writes (IndexOutOfRange)
  //   2) the scope is a storage scope (InvalidScope)
  //   3) the block is a leaf, the only block writing the buffer, and does not read it
  //      when it is an inout parameter (NotSingleWriteBlock)
  //   4) each dimension of the region written is one iteration variable or a constant
  //      range (UnsupportedWriteRegion)
  //   5) no other block in the block's statement of the scope accesses the buffer
  //      (SharedLoopNest).
  BlockRV cache_write(BlockRV block, int64_t write_buffer_index, std::string storage_scope);
  // Moves buffer `writes[buffer_index]` of the block to `storage_scope` everywhere.
  // Requires:
  //   1) the index is one of the block's writes (IndexOutOfRange)
  //   2) the scope is a storage scope (InvalidScope)
  //   3) the buffer is allocated in a block, not a parameter (ParameterBuffer).
  void set_scope(BlockRV block, int64_t buffer_index, std::string storage_scope);
  CheckResult check_cache_read(const detail::CheckedOperands& ops) const;
  CheckResult check_cache_write(const detail::CheckedOperands& ops) const;
  CheckResult check_set_scope(const detail::CheckedOperands& ops) const;
#endif
#ifdef DRAGON_SCHEDULE_PRIVATE_MEMBERS
  detail::Planned<detail::CachePlan> plan_cache_read(BlockRV block, std::optional<int64_t> read_buffer_index,
                                                     std::optional<std::string_view> storage_scope,
                                                     const std::vector<BlockRV>* consumer_blocks) const;
  detail::Planned<detail::CachePlan> plan_cache_write(BlockRV block, std::optional<int64_t> write_buffer_index,
                                                      std::optional<std::string_view> storage_scope) const;
  detail::Planned<detail::CachePlan> plan_set_scope(BlockRV block, std::optional<int64_t> buffer_index,
                                                    std::optional<std::string_view> storage_scope) const;
#endif

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

bool is_storage_scope(std::string_view scope) {
  static const std::vector<std::string_view> kScopes = {
      "global", "shared", "shared.dyn", "local", "warp", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"};
  return std::find(kScopes.begin(), kScopes.end(), scope) != kScopes.end();
}

// "A" in "shared.dyn" -> "A_shared_dyn": the base of the cache's name.
std::string cache_name(const std::string& buffer, const std::string& scope) {
  std::string name = buffer + "_" + scope;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

// The statements of a scope block's body, in order.
std::vector<Stmt> top_level(const BlockNode* scope) {
  if (const auto* seq = scope->body.as<SeqStmtNode>()) return seq->seq;
  return {scope->body};
}

// The leaf blocks under `scope` at any depth: the child blocks of its body in program
// order, then those of each non-leaf's body among them, and so on.
std::vector<const BlockNode*> leaves_under(const BlockTree& tree, const BlockNode* scope) {
  std::vector<const BlockNode*> out;
  std::vector<const BlockNode*> todo{scope};
  for (size_t i = 0; i < todo.size(); ++i) {
    for (const BlockTree::BlockInfo& child : tree.blocks()) {
      if (child.scope != todo[i] || child.in_scope_init) continue;
      if (child.leaf)
        out.push_back(child.block);
      else
        todo.push_back(child.block);
    }
  }
  return out;
}

// A copy block `name` over the box `box` of `from`, into `to`, under its own loops
// ax0, ax1, ... (one per dimension, starting at 0).
Stmt copy_nest(const std::string& name, const Buffer& from, const Buffer& to, const std::vector<Range>& box) {
  std::vector<Var> loops;
  std::vector<IterVar> iters;
  std::vector<Expr> bindings;
  std::vector<Expr> indices;
  std::vector<Range> point;
  Analyzer analyzer;
  for (size_t d = 0; d < box.size(); ++d) {
    const DataType type = box[d].extent.dtype();
    Var loop(fmt::format("ax{}", d), type);
    Var v(fmt::format("v{}", d), type);
    analyzer.bind(loop, Range{make_zero(type), box[d].extent});
    loops.push_back(loop);
    iters.push_back(IterVar{v, box[d], IterKind::kSpatial});
    bindings.push_back(analyzer.simplify(loop + box[d].min));
    indices.push_back(v);
    point.push_back(Range{v, make_const(type, 1)});
  }
  Stmt store = BufferStoreNode::make(to, BufferLoadNode::make(from, indices), indices);
  Block block = BlockNode::make(name, iters, {BufferRegion{from, point}}, {BufferRegion{to, point}}, store);
  Stmt nest = BlockRealizeNode::make(bindings, Expr(), block);
  for (size_t d = box.size(); d-- > 0;) {
    nest = ForNode::make(loops[d], make_zero(loops[d].dtype()), box[d].extent, ForKind::kSerial, nest);
  }
  return nest;
}

// `scope` with `stmt` inserted at position `at` of its body and `buffer` allocated.
Stmt with_stage(const BlockNode* scope, size_t at, const Stmt& stmt, const Buffer& buffer) {
  std::vector<Stmt> stmts = top_level(scope);
  stmts.insert(stmts.begin() + static_cast<std::ptrdiff_t>(at), stmt);
  std::vector<Buffer> allocs = scope->alloc_buffers;
  allocs.push_back(buffer);
  return BlockNode::make(scope->name, scope->iter_vars, scope->reads, scope->writes, SeqStmtNode::make(stmts),
                         scope->init, std::move(allocs), scope->annotations);
}

}  // namespace

// What the construction of cache_read, cache_write and set_scope needs.
struct detail::CachePlan {
  const BlockNode* block = nullptr;
  Buffer buffer;                            // the buffer cached (moved)
  const BlockNode* scope = nullptr;         // the block's scope block
  std::vector<const BlockNode*> consumers;  // cache_read: the blocks reading the copy
  size_t at = 0;                            // where in the scope's body the copy goes
  std::vector<Range> box;                   // cache_write: the region written
};

namespace {

bool is_param(const PrimFunc& func, const Buffer& buffer) {
  return std::any_of(func->params.begin(), func->params.end(),
                     [&](const Param& p) { return p.buffer.same_as(buffer); });
}

}  // namespace

detail::Planned<detail::CachePlan> Schedule::plan_cache_read(BlockRV block_rv, std::optional<int64_t> read_buffer_index,
                                                             std::optional<std::string_view> storage_scope,
                                                             const std::vector<BlockRV>* consumer_blocks) const {
  constexpr InstructionKind kKind = InstructionKind::CacheRead;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  detail::CachePlan plan;
  const BlockNode* block = plan.block = *found;
  std::vector<const BlockNode*>& consumers = plan.consumers;
  if (consumer_blocks != nullptr) {
    for (BlockRV c : *consumer_blocks) {
      auto consumer = find(c, kKind, "consumer");
      if (!consumer.ok()) return std::move(consumer).take_error();
      consumers.push_back(*consumer);
    }
  }
  auto operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus here{nullptr, block->name};
  if (!read_buffer_index) return plan;  // preconditions 1, 3 and 4 read the buffer
  if (*read_buffer_index < 0 || *read_buffer_index >= static_cast<int64_t>(block->reads.size())) {
    return error(
        kKind, 1, "IndexOutOfRange", "read_buffer_index",
        [&] {
          return fmt::format("the index is {}, the block reads {} buffers", *read_buffer_index, block->reads.size());
        },
        here);
  }
  if (storage_scope && !is_storage_scope(*storage_scope)) {
    return error(
        kKind, 2, "InvalidScope", "storage_scope",
        [&] { return fmt::format("'{}' is not a storage scope", *storage_scope); }, here);
  }
  const Buffer& buffer = plan.buffer = block->reads[*read_buffer_index].buffer;
  const BlockNode* scope = plan.scope = tree_->find(block)->scope;
  if (consumer_blocks == nullptr) return plan;  // preconditions 3 and 4 read the consumers
  if (consumers.empty()) consumers.push_back(block);
  for (size_t i = 0; i < consumers.size(); ++i) {
    const BlockNode* c = consumers[i];
    const BlockTree::BlockInfo* info = tree_->find(c);
    auto who = [&] {
      return i < consumer_blocks->size() ? fmt::format("consumer {}", rv_name((*consumer_blocks)[i])) : operand();
    };
    if (!detail::has_buffer(c->reads, buffer.get()) || detail::has_buffer(c->writes, buffer.get()) || !info->leaf ||
        info->scope != scope) {
      return error(
          kKind, 3, "NotAConsumer", who,
          [&] {
            return fmt::format("block '{}' is not a leaf of scope '{}' that reads '{}' without writing it", c->name,
                               scope->name, buffer->name);
          },
          ErrorLocus{nullptr, c->name});
    }
  }
  // The copy goes right after the one writer in the scope, or first.
  std::vector<const BlockNode*> writers;
  for (const BlockNode* b : leaves_under(*tree_, scope)) {
    if (detail::has_buffer(b->writes, buffer.get())) writers.push_back(b);
  }
  if (writers.size() > 1) {
    return error(
        kKind, 4, "NotSingleWriter", operand,
        [&] {
          return fmt::format("blocks '{}' and '{}' both write '{}'", writers[0]->name, writers[1]->name, buffer->name);
        },
        ErrorLocus{nullptr, writers[1]->name});
  }
  if (writers.size() == 1) {
    plan.at = tree_->statement_in(scope, writers[0]) + 1;
    for (const BlockNode* c : consumers) {
      if (tree_->statement_in(scope, c) < plan.at) {
        return error(
            kKind, 4, "NotSingleWriter", operand,
            [&] {
              return fmt::format("block '{}' does not run after writer '{}' in a statement of its own", c->name,
                                 writers[0]->name);
            },
            ErrorLocus{nullptr, c->name});
      }
    }
  }
  return plan;
}

BlockRV Schedule::cache_read(BlockRV block_rv, int64_t read_buffer_index, std::string storage_scope,
                             std::vector<BlockRV> consumer_blocks) {
  constexpr InstructionKind kKind = InstructionKind::CacheRead;
  const detail::CachePlan plan = plan_cache_read(block_rv, read_buffer_index, storage_scope, &consumer_blocks).take();
  const Buffer& buffer = plan.buffer;
  const BlockNode* scope = plan.scope;
  const std::string name = detail::fresh_block_name(func_, cache_name(buffer->name, storage_scope));
  Buffer cache = Buffer::make(name, buffer->dtype, buffer->shape, storage_scope);
  std::vector<Range> box;
  for (int64_t extent : buffer->shape) {
    const DataType type = extent > INT32_MAX ? DataType::i64() : DataType::i32();
    box.push_back(Range{make_zero(type), make_const(type, static_cast<double>(extent))});
  }
  Stmt nest = copy_nest(name, buffer, cache, box);
  PrimFunc result = func_;
  for (const BlockNode* c : plan.consumers) {
    const BlockNode* now = detail::find_block_realize(result, c->name)->block.get();
    result = detail::replace_in_func(result, now, detail::replace_buffers(Stmt(now), {{buffer.get(), cache}}));
  }
  const BlockNode* new_scope = detail::find_block_realize(result, scope->name)->block.get();
  result = detail::replace_in_func(result, new_scope, with_stage(new_scope, plan.at, nest, cache));

  BlockRV out = new_block_rv(name);
  commit(std::move(result),
         detail::make_instruction(kKind, {out}, block_rv, read_buffer_index, storage_scope, consumer_blocks));
  return out;
}

detail::Planned<detail::CachePlan> Schedule::plan_cache_write(BlockRV block_rv,
                                                              std::optional<int64_t> write_buffer_index,
                                                              std::optional<std::string_view> storage_scope) const {
  constexpr InstructionKind kKind = InstructionKind::CacheWrite;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  detail::CachePlan plan;
  const BlockNode* block = plan.block = *found;
  auto operand = [&] { return fmt::format("block {}", rv_name(block_rv)); };
  const ErrorLocus here{nullptr, block->name};
  if (!write_buffer_index) return plan;  // preconditions 1 and 3-5 read the buffer
  if (*write_buffer_index < 0 || *write_buffer_index >= static_cast<int64_t>(block->writes.size())) {
    return error(
        kKind, 1, "IndexOutOfRange", "write_buffer_index",
        [&] {
          return fmt::format("the index is {}, the block writes {} buffers", *write_buffer_index, block->writes.size());
        },
        here);
  }
  if (storage_scope && !is_storage_scope(*storage_scope)) {
    return error(
        kKind, 2, "InvalidScope", "storage_scope",
        [&] { return fmt::format("'{}' is not a storage scope", *storage_scope); }, here);
  }
  const BufferRegion& written = block->writes[*write_buffer_index];
  const Buffer& buffer = plan.buffer = written.buffer;
  const BlockTree::BlockInfo* info = tree_->find(block);
  const BlockNode* scope = plan.scope = info->scope;
  if (!info->leaf) return error(kKind, 3, "NotSingleWriteBlock", operand, "the block has blocks inside it", here);
  for (const BlockTree::BlockInfo& other : tree_->blocks()) {
    const BlockNode* b = other.block;
    if (b != block && other.leaf && detail::has_buffer(b->writes, buffer.get())) {
      return error(
          kKind, 3, "NotSingleWriteBlock", operand,
          [&] { return fmt::format("block '{}' also writes '{}'", b->name, buffer->name); },
          ErrorLocus{nullptr, b->name});
    }
  }
  bool in_place = std::any_of(func_->params.begin(), func_->params.end(), [&](const Param& p) {
    return p.buffer.same_as(buffer) && p.role == ParamRole::kInOut;
  });
  if (in_place && detail::has_buffer(block->reads, buffer.get())) {
    return error(
        kKind, 3, "NotSingleWriteBlock", operand,
        [&] {
          return fmt::format("the block reads '{}', an inout parameter, before the cache would hold it", buffer->name);
        },
        here);
  }
  // The box written: each dimension one iteration variable (its domain) or a constant.
  for (size_t d = 0; d < written.region.size(); ++d) {
    const Range& r = written.region[d];
    const IterVar* iv = nullptr;
    for (const IterVar& v : block->iter_vars) {
      if (v.var.same_as(r.min)) iv = &v;
    }
    if (iv != nullptr && is_const_int(r.extent, 1)) {
      plan.box.push_back(iv->dom);
    } else if (as_const_int(r.min) && as_const_int(r.extent)) {
      plan.box.push_back(r);
    } else {
      return error(
          kKind, 4, "UnsupportedWriteRegion", operand,
          [&] {
            return fmt::format(
                "dimension {} of the region written is {} +: {}, not an iteration variable or a "
                "constant range",
                d, print_expr(r.min), print_expr(r.extent));
          },
          here);
    }
  }
  plan.at = tree_->statement_in(scope, block);
  for (const BlockNode* b : leaves_under(*tree_, scope)) {
    if (b == block || tree_->statement_in(scope, b) != plan.at) continue;
    if (detail::has_buffer(b->reads, buffer.get()) || detail::has_buffer(b->writes, buffer.get())) {
      return error(
          kKind, 5, "SharedLoopNest", operand,
          [&] { return fmt::format("block '{}' accesses '{}' in the same loop nest", b->name, buffer->name); },
          ErrorLocus{nullptr, b->name});
    }
  }
  return plan;
}

BlockRV Schedule::cache_write(BlockRV block_rv, int64_t write_buffer_index, std::string storage_scope) {
  constexpr InstructionKind kKind = InstructionKind::CacheWrite;
  const detail::CachePlan plan = plan_cache_write(block_rv, write_buffer_index, storage_scope).take();
  const BlockNode* block = plan.block;
  const Buffer& buffer = plan.buffer;
  const BlockNode* scope = plan.scope;
  const std::string name = detail::fresh_block_name(func_, cache_name(buffer->name, storage_scope));
  Buffer cache = Buffer::make(name, buffer->dtype, buffer->shape, storage_scope);
  Stmt nest = copy_nest(name, cache, buffer, plan.box);
  PrimFunc result =
      detail::replace_in_func(func_, block, detail::replace_buffers(Stmt(block), {{buffer.get(), cache}}));
  const BlockNode* new_scope = detail::find_block_realize(result, scope->name)->block.get();
  result = detail::replace_in_func(result, new_scope, with_stage(new_scope, plan.at + 1, nest, cache));

  BlockRV out = new_block_rv(name);
  // TVM records a consumer list for cache_write too; this one takes none, so it is empty.
  commit(std::move(result), detail::make_instruction(kKind, {out}, block_rv, write_buffer_index, storage_scope,
                                                     std::vector<BlockRV>{}));
  return out;
}

detail::Planned<detail::CachePlan> Schedule::plan_set_scope(BlockRV block_rv, std::optional<int64_t> buffer_index,
                                                            std::optional<std::string_view> storage_scope) const {
  constexpr InstructionKind kKind = InstructionKind::SetScope;
  auto found = find(block_rv, kKind, "block");
  if (!found.ok()) return std::move(found).take_error();
  detail::CachePlan plan;
  const BlockNode* block = plan.block = *found;
  const ErrorLocus here{nullptr, block->name};
  if (!buffer_index) return plan;  // preconditions 1 and 3 read the buffer
  if (*buffer_index < 0 || *buffer_index >= static_cast<int64_t>(block->writes.size())) {
    return error(
        kKind, 1, "IndexOutOfRange", "buffer_index",
        [&] {
          return fmt::format("the index is {}, the block writes {} buffers", *buffer_index, block->writes.size());
        },
        here);
  }
  if (storage_scope && !is_storage_scope(*storage_scope)) {
    return error(
        kKind, 2, "InvalidScope", "storage_scope",
        [&] { return fmt::format("'{}' is not a storage scope", *storage_scope); }, here);
  }
  plan.buffer = block->writes[*buffer_index].buffer;
  if (is_param(func_, plan.buffer)) {
    return error(
        kKind, 3, "ParameterBuffer", [&] { return fmt::format("block {}", rv_name(block_rv)); },
        [&] { return fmt::format("'{}' is a parameter of the function, not an allocated buffer", plan.buffer->name); },
        here);
  }
  return plan;
}

void Schedule::set_scope(BlockRV block_rv, int64_t buffer_index, std::string storage_scope) {
  constexpr InstructionKind kKind = InstructionKind::SetScope;
  const detail::CachePlan plan = plan_set_scope(block_rv, buffer_index, storage_scope).take();
  const Buffer& buffer = plan.buffer;
  Buffer moved = Buffer::make(buffer->name, buffer->dtype, buffer->shape, storage_scope);
  PrimFunc result = func_.with_body(detail::replace_buffers(func_->body, {{buffer.get(), moved}}));

  commit(std::move(result), detail::make_instruction(kKind, {}, block_rv, buffer_index, storage_scope));
}

CheckResult Schedule::check_cache_read(const detail::CheckedOperands& ops) const {
  constexpr InstructionKind kKind = InstructionKind::CacheRead;
  ops.expect(2, 2);
  auto block = ops.block(0);
  auto index = ops.int_attr(0);
  auto scope = ops.string_attr(1);
  std::optional<std::vector<BlockRV>> consumers;
  if (const Arg* list = ops.input(1)) {
    const auto* blocks = list->as<Arg::List>();
    if (blocks == nullptr) throw UserError("CacheRead: the second input must be a list of consumer blocks");
    consumers.emplace();
    for (const Arg& a : *blocks) consumers->push_back(detail::arg_as<BlockRV>(kKind, a));
  }
  if (!block) return detail::unknown();
  return detail::verdict(plan_cache_read(*block, index, scope, consumers ? &*consumers : nullptr),
                         index && scope && consumers, 1);
}

CheckResult Schedule::check_cache_write(const detail::CheckedOperands& ops) const {
  // Replay takes the block alone or with an empty consumer list (TVM before v0.14 and after).
  if (ops.complete() && ops.input_count() != 1) ops.expect(2, 2);
  ops.expect_attrs(2);
  if (const Arg* list = ops.input(1)) {
    const auto* blocks = list->as<Arg::List>();
    if (blocks == nullptr || !blocks->empty()) {
      throw UserError("CacheWrite: only an empty list of consumer blocks is supported");
    }
  }
  auto block = ops.block(0);
  auto index = ops.int_attr(0);
  auto scope = ops.string_attr(1);
  if (!block) return detail::unknown();
  return detail::verdict(plan_cache_write(*block, index, scope), index && scope, 1);
}

CheckResult Schedule::check_set_scope(const detail::CheckedOperands& ops) const {
  ops.expect(1, 2);
  auto block = ops.block(0);
  auto index = ops.int_attr(0);
  auto scope = ops.string_attr(1);
  if (!block) return detail::unknown();
  return detail::verdict(plan_set_scope(*block, index, scope), index && scope, 0);
}

namespace detail {

constexpr auto kCacheReadSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::attr("read_buffer_index", ValueType::kInt),
    slot::attr("storage_scope", ValueType::kEnum).of(Vocabulary::kStorageScope),
    slot::rest_in_list_input("consumer_blocks", ValueType::kBlock),
});

constinit const InstructionSignature kCacheReadSignature{
    .python_name = "cache_read",
    .slots = kCacheReadSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_method<&Schedule::cache_read>,
    .check = check_method<&Schedule::check_cache_read>,
};

constexpr auto kCacheWriteSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::attr("write_buffer_index", ValueType::kInt),
    slot::attr("storage_scope", ValueType::kEnum).of(Vocabulary::kStorageScope),
    slot::rest_in_list_input("consumer_blocks", ValueType::kBlock),
});

std::vector<RandomVar> replay_cache_write(Schedule& sch, const Operands& operands) {
  auto [block, index, scope, consumers] = operands.unpack<BlockRV, int64_t, std::string, std::vector<BlockRV>>();
  if (!consumers.empty()) throw UserError("CacheWrite: only an empty list of consumer blocks is supported");
  return {sch.cache_write(block, index, std::move(scope))};
}

// TVM before v0.14 recorded only the block: no consumer list.
std::optional<Instruction> cache_write_from_older_tvm(const std::vector<Arg>& inputs, const std::vector<Arg>& attrs) {
  if (inputs.size() != 1) return std::nullopt;
  return Instruction{InstructionKind::CacheWrite, {inputs[0], Arg::List{}}, attrs, {}};
}

constinit const InstructionSignature kCacheWriteSignature{
    .python_name = "cache_write",
    .slots = kCacheWriteSlots,
    .outputs = OutputSignature::one(RVType::kBlock),
    .replay = replay_cache_write,
    .upgrade = cache_write_from_older_tvm,
    .check = check_method<&Schedule::check_cache_write>,
};

constexpr auto kSetScopeSlots = numbered_slots({
    slot::input("block", ValueType::kBlock),
    slot::attr("buffer_index", ValueType::kInt),
    slot::attr("storage_scope", ValueType::kEnum).of(Vocabulary::kStorageScope),
});

constinit const InstructionSignature kSetScopeSignature{
    .python_name = "set_scope",
    .slots = kSetScopeSlots,
    .replay = replay_method<&Schedule::set_scope>,
    .check = check_method<&Schedule::check_set_scope>,
};

}  // namespace detail
}  // namespace dragon::schedule
