// cache_read and cache_write: a copy of a buffer in another storage scope, made by a new
// block with its own loop nest at the level of the scope block (compute_at moves it
// later); the consumers read, or the block writes, the copy. Also set_scope, which only
// moves an allocated buffer to another scope.
#include <algorithm>

#include <fmt/format.h>

#include "dragon/ir/op.h"
#include "dragon/ir/printer.h"
#include "../instruction_apply.h"
#include "../ir_tree.h"

namespace dragon::schedule {

using namespace dragon::ir;

namespace {

bool is_storage_scope(std::string_view scope) {
  static const std::vector<std::string_view> kScopes = {
      "global", "shared", "shared.dyn", "local", "warp", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"};
  return std::find(kScopes.begin(), kScopes.end(), scope) != kScopes.end();
}

bool has_buffer(const std::vector<BufferRegion>& regions, const BufferNode* buffer) {
  return std::any_of(regions.begin(), regions.end(), [&](const BufferRegion& r) { return r.buffer.get() == buffer; });
}

bool is_leaf(const BlockNode* block) {
  return detail::child_block_realizes(block->body).empty() &&
         (!block->init.defined() || detail::child_block_realizes(block->init).empty());
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

// The position of the top-level statement of `scope` that contains `block`.
size_t top_index(const PrimFunc& func, const BlockNode* scope, const BlockNode* block) {
  std::vector<Stmt> stmts = top_level(scope);
  for (const StmtNode* n : detail::path_to(func, block)) {
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (stmts[i].get() == n) return i;
    }
  }
  DRAGON_UNREACHABLE("block '{}' is not under scope '{}'", block->name, scope->name);
}

// The leaf blocks under `scope` (not in nested scopes' blocks too: all leaves below).
std::vector<const BlockNode*> leaves_under(const BlockNode* scope) {
  std::vector<const BlockNode*> out;
  std::vector<const BlockRealizeNode*> todo = detail::child_block_realizes(scope->body);
  for (size_t i = 0; i < todo.size(); ++i) {
    const BlockNode* b = todo[i]->block.get();
    if (is_leaf(b)) {
      out.push_back(b);
    } else {
      for (const BlockRealizeNode* r : detail::child_block_realizes(b->body)) todo.push_back(r);
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

BlockRV Schedule::cache_read(BlockRV block_rv, int64_t read_buffer_index, std::string storage_scope,
                             std::vector<BlockRV> consumer_blocks) {
  constexpr InstructionKind kKind = InstructionKind::CacheRead;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  std::vector<const BlockNode*> consumers;
  for (BlockRV c : consumer_blocks) consumers.push_back(resolve(c, kKind, "consumer"));
  const std::string operand = fmt::format("block {}", rv_name(block_rv));
  const ErrorLocus here{nullptr, block->name};
  if (read_buffer_index < 0 || read_buffer_index >= static_cast<int64_t>(block->reads.size())) {
    throw error(kKind, 1, "IndexOutOfRange", "read_buffer_index",
                fmt::format("the index is {}, the block reads {} buffers", read_buffer_index, block->reads.size()),
                here);
  }
  if (!is_storage_scope(storage_scope)) {
    throw error(kKind, 2, "InvalidScope", "storage_scope",
                fmt::format("'{}' is not a storage scope", storage_scope), here);
  }
  const Buffer buffer = block->reads[read_buffer_index].buffer;
  const BlockNode* scope = detail::scope_block(detail::path_to(func_, block));
  if (consumers.empty()) consumers.push_back(block);
  for (size_t i = 0; i < consumers.size(); ++i) {
    const BlockNode* c = consumers[i];
    std::string who = i < consumer_blocks.size() ? fmt::format("consumer {}", rv_name(consumer_blocks[i])) : operand;
    if (!has_buffer(c->reads, buffer.get()) || has_buffer(c->writes, buffer.get()) || !is_leaf(c) ||
        detail::scope_block(detail::path_to(func_, c)) != scope) {
      throw error(kKind, 3, "NotAConsumer", who,
                  fmt::format("block '{}' is not a leaf of scope '{}' that reads '{}' without writing it", c->name,
                              scope->name, buffer->name),
                  ErrorLocus{nullptr, c->name});
    }
  }
  // The copy goes right after the one writer in the scope, or first.
  std::vector<const BlockNode*> writers;
  for (const BlockNode* b : leaves_under(scope)) {
    if (has_buffer(b->writes, buffer.get())) writers.push_back(b);
  }
  size_t at = 0;
  if (writers.size() > 1) {
    throw error(kKind, 4, "NotSingleWriter", operand,
                fmt::format("blocks '{}' and '{}' both write '{}'", writers[0]->name, writers[1]->name, buffer->name),
                ErrorLocus{nullptr, writers[1]->name});
  }
  if (writers.size() == 1) {
    at = top_index(func_, scope, writers[0]) + 1;
    for (const BlockNode* c : consumers) {
      if (top_index(func_, scope, c) < at) {
        throw error(kKind, 4, "NotSingleWriter", operand,
                    fmt::format("block '{}' does not run after writer '{}' in a statement of its own", c->name,
                                writers[0]->name),
                    ErrorLocus{nullptr, c->name});
      }
    }
  }

  const std::string name = detail::fresh_block_name(func_, cache_name(buffer->name, storage_scope));
  Buffer cache = Buffer::make(name, buffer->dtype, buffer->shape, storage_scope);
  std::vector<Range> box;
  for (int64_t extent : buffer->shape) {
    const DataType type = extent > INT32_MAX ? DataType::i64() : DataType::i32();
    box.push_back(Range{make_zero(type), make_const(type, static_cast<double>(extent))});
  }
  Stmt nest = copy_nest(name, buffer, cache, box);
  PrimFunc result = func_;
  for (const BlockNode* c : consumers) {
    const BlockNode* now = detail::find_block_realize(result, c->name)->block.get();
    result = detail::replace_in_func(result, now, detail::replace_buffers(Stmt(now), {{buffer.get(), cache}}));
  }
  const BlockNode* new_scope = detail::find_block_realize(result, scope->name)->block.get();
  result = detail::replace_in_func(result, new_scope, with_stage(new_scope, at, nest, cache));

  BlockRV out = new_block_rv(name);
  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(block_rv);
  Arg::List list;
  for (BlockRV c : consumer_blocks) list.emplace_back(c);
  inst.inputs.emplace_back(std::move(list));
  inst.attrs.emplace_back(read_buffer_index);
  inst.attrs.emplace_back(storage_scope);
  inst.outputs.push_back(out);
  commit(std::move(result), std::move(inst));
  return out;
}

BlockRV Schedule::cache_write(BlockRV block_rv, int64_t write_buffer_index, std::string storage_scope) {
  constexpr InstructionKind kKind = InstructionKind::CacheWrite;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  const std::string operand = fmt::format("block {}", rv_name(block_rv));
  const ErrorLocus here{nullptr, block->name};
  if (write_buffer_index < 0 || write_buffer_index >= static_cast<int64_t>(block->writes.size())) {
    throw error(kKind, 1, "IndexOutOfRange", "write_buffer_index",
                fmt::format("the index is {}, the block writes {} buffers", write_buffer_index, block->writes.size()),
                here);
  }
  if (!is_storage_scope(storage_scope)) {
    throw error(kKind, 2, "InvalidScope", "storage_scope",
                fmt::format("'{}' is not a storage scope", storage_scope), here);
  }
  const BufferRegion& written = block->writes[write_buffer_index];
  const Buffer buffer = written.buffer;
  const BlockNode* scope = detail::scope_block(detail::path_to(func_, block));
  if (!is_leaf(block)) {
    throw error(kKind, 3, "NotSingleWriteBlock", operand, "the block has blocks inside it", here);
  }
  for (const BlockRealizeNode* r : detail::all_block_realizes(func_)) {
    const BlockNode* b = r->block.get();
    if (b != block && is_leaf(b) && has_buffer(b->writes, buffer.get())) {
      throw error(kKind, 3, "NotSingleWriteBlock", operand,
                  fmt::format("block '{}' also writes '{}'", b->name, buffer->name), ErrorLocus{nullptr, b->name});
    }
  }
  bool in_place = std::any_of(func_->params.begin(), func_->params.end(), [&](const Param& p) {
    return p.buffer.same_as(buffer) && p.role == ParamRole::kInOut;
  });
  if (in_place && has_buffer(block->reads, buffer.get())) {
    throw error(kKind, 3, "NotSingleWriteBlock", operand,
                fmt::format("the block reads '{}', an inout parameter, before the cache would hold it", buffer->name),
                here);
  }
  // The box written: each dimension one iteration variable (its domain) or a constant.
  std::vector<Range> box;
  for (size_t d = 0; d < written.region.size(); ++d) {
    const Range& r = written.region[d];
    const IterVar* iv = nullptr;
    for (const IterVar& v : block->iter_vars) {
      if (v.var.same_as(r.min)) iv = &v;
    }
    if (iv != nullptr && is_const_int(r.extent, 1)) {
      box.push_back(iv->dom);
    } else if (as_const_int(r.min) && as_const_int(r.extent)) {
      box.push_back(r);
    } else {
      throw error(kKind, 4, "UnsupportedWriteRegion", operand,
                  fmt::format("dimension {} of the region written is {} +: {}, not an iteration variable or a "
                              "constant range",
                              d, print_expr(r.min), print_expr(r.extent)),
                  here);
    }
  }
  const size_t at = top_index(func_, scope, block);
  for (const BlockNode* b : leaves_under(scope)) {
    if (b == block || top_index(func_, scope, b) != at) continue;
    if (has_buffer(b->reads, buffer.get()) || has_buffer(b->writes, buffer.get())) {
      throw error(kKind, 5, "SharedLoopNest", operand,
                  fmt::format("block '{}' accesses '{}' in the same loop nest", b->name, buffer->name),
                  ErrorLocus{nullptr, b->name});
    }
  }

  const std::string name = detail::fresh_block_name(func_, cache_name(buffer->name, storage_scope));
  Buffer cache = Buffer::make(name, buffer->dtype, buffer->shape, storage_scope);
  Stmt nest = copy_nest(name, cache, buffer, box);
  PrimFunc result =
      detail::replace_in_func(func_, block, detail::replace_buffers(Stmt(block), {{buffer.get(), cache}}));
  const BlockNode* new_scope = detail::find_block_realize(result, scope->name)->block.get();
  result = detail::replace_in_func(result, new_scope, with_stage(new_scope, at + 1, nest, cache));

  BlockRV out = new_block_rv(name);
  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(block_rv);
  inst.inputs.emplace_back(Arg::List{});
  inst.attrs.emplace_back(write_buffer_index);
  inst.attrs.emplace_back(storage_scope);
  inst.outputs.push_back(out);
  commit(std::move(result), std::move(inst));
  return out;
}

void Schedule::set_scope(BlockRV block_rv, int64_t buffer_index, std::string storage_scope) {
  constexpr InstructionKind kKind = InstructionKind::SetScope;
  const BlockNode* block = resolve(block_rv, kKind, "block");
  const ErrorLocus here{nullptr, block->name};
  if (buffer_index < 0 || buffer_index >= static_cast<int64_t>(block->writes.size())) {
    throw error(kKind, 1, "IndexOutOfRange", "buffer_index",
                fmt::format("the index is {}, the block writes {} buffers", buffer_index, block->writes.size()), here);
  }
  if (!is_storage_scope(storage_scope)) {
    throw error(kKind, 2, "InvalidScope", "storage_scope",
                fmt::format("'{}' is not a storage scope", storage_scope), here);
  }
  const Buffer buffer = block->writes[buffer_index].buffer;
  bool param = std::any_of(func_->params.begin(), func_->params.end(),
                           [&](const Param& p) { return p.buffer.same_as(buffer); });
  if (param) {
    throw error(kKind, 3, "ParameterBuffer", fmt::format("block {}", rv_name(block_rv)),
                fmt::format("'{}' is a parameter of the function, not an allocated buffer", buffer->name), here);
  }
  Buffer moved = Buffer::make(buffer->name, buffer->dtype, buffer->shape, storage_scope);
  PrimFunc result = func_.with_body(detail::replace_buffers(func_->body, {{buffer.get(), moved}}));

  Instruction inst;
  inst.kind = kKind;
  inst.inputs.emplace_back(block_rv);
  inst.attrs.emplace_back(buffer_index);
  inst.attrs.emplace_back(storage_scope);
  commit(std::move(result), std::move(inst));
}

namespace detail {

std::vector<RandomVar> apply_cache_read(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                        const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::CacheRead;
  expect_count(kKind, "inputs", inputs, 2);
  expect_count(kKind, "attrs", attrs, 2);
  const auto* list = inputs[1].as<Arg::List>();
  if (list == nullptr) throw UserError("CacheRead: the second input must be a list of consumer blocks");
  std::vector<BlockRV> consumers;
  for (const Arg& a : *list) consumers.push_back(block_arg(kKind, a));
  return {sch.cache_read(block_arg(kKind, inputs[0]), int_arg(kKind, attrs[0]), string_arg(kKind, attrs[1]),
                         std::move(consumers))};
}

std::vector<RandomVar> apply_cache_write(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                         const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::CacheWrite;
  expect_count(kKind, "attrs", attrs, 2);
  // TVM before v0.14 recorded only the block; later versions add a consumer list.
  if (inputs.size() != 1 && inputs.size() != 2) expect_count(kKind, "inputs", inputs, 2);
  if (inputs.size() == 2) {
    const auto* list = inputs[1].as<Arg::List>();
    if (list == nullptr || !list->empty()) {
      throw UserError("CacheWrite: only an empty list of consumer blocks is supported");
    }
  }
  return {sch.cache_write(block_arg(kKind, inputs[0]), int_arg(kKind, attrs[0]), string_arg(kKind, attrs[1]))};
}

std::vector<RandomVar> apply_set_scope(Schedule& sch, const std::vector<Arg>& inputs, const std::vector<Arg>& attrs,
                                       const std::optional<Arg>&) {
  constexpr InstructionKind kKind = InstructionKind::SetScope;
  expect_count(kKind, "inputs", inputs, 1);
  expect_count(kKind, "attrs", attrs, 2);
  sch.set_scope(block_arg(kKind, inputs[0]), int_arg(kKind, attrs[0]), string_arg(kKind, attrs[1]));
  return {};
}

}  // namespace detail
}  // namespace dragon::schedule
