// BlockTree: how a function's blocks and loops nest, found in one walk. Per block its
// realization, its scope block, the loops above it and which statement of its scope's
// body holds it; per loop its scope block and the loops above it there; the statement
// holding each statement. For analyses that ask many such questions of one function
// (schedule primitives' preconditions, the constrained decoder). Not updated in place:
// the IR is immutable, a changed function needs a tree of its own.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::ir {

class BlockTree {
 public:
  explicit BlockTree(const PrimFunc& func);
  BlockTree(const BlockTree&) = delete;
  BlockTree& operator=(const BlockTree&) = delete;

  struct BlockInfo {
    const BlockNode* block = nullptr;
    // Its realization; null only for a function body that is a bare block.
    const BlockRealizeNode* realize = nullptr;
    // The nearest block above it (its scope); null for the root block.
    const BlockNode* scope = nullptr;
    // Every loop above it, outermost first (those of enclosing blocks too).
    std::span<const ForNode* const> loops;
    // How many of `loops`, the innermost ones, lie under `scope` (what get_loops returns).
    size_t scope_loop_count = 0;
    // Which statement of the scope's body holds it (an element of a sequence, else 0).
    size_t statement = 0;
    // No block inside it (in its body or its init).
    bool leaf = true;
    // Inside some block's init.
    bool in_init = false;
    // Inside its scope block's init (rather than its body).
    bool in_scope_init = false;
    // The loops between its scope and it, outermost first.
    std::span<const ForNode* const> scope_loops() const { return loops.subspan(loops.size() - scope_loop_count); }
  };

  struct LoopInfo {
    const ForNode* loop = nullptr;
    // The nearest block above it; null when the function body is a bare loop.
    const BlockNode* scope = nullptr;
    // The loops between `scope` and it, outermost first.
    std::span<const ForNode* const> scope_loops;
  };

  // Every block, in program order: a block before the blocks inside it, a block's init
  // before its body (the order of schedule lookups by name).
  const std::vector<BlockInfo>& blocks() const { return blocks_; }
  // How many loops the function has.
  size_t loop_count() const { return loops_.size(); }
  // null when the block or loop is not in the function.
  const BlockInfo* find(const BlockNode* block) const;
  const LoopInfo* find(const ForNode* loop) const;
  // The first block of that name in program order.
  const BlockInfo* named(std::string_view name) const;
  // The loop of a loop variable.
  const LoopInfo* loop_of(const VarNode* loop_var) const;
  // Whether no two blocks share a name.
  bool names_unique() const { return names_unique_; }

  // The statement directly holding `node` (null for the function body and for nodes not
  // in the function). Stores and evaluations, which hold no statement, are not recorded.
  const StmtNode* parent(const StmtNode* node) const;
  // The statements from the function body down to `node`, both included; empty when
  // `node` is not in the function (as schedule's path_to walks it).
  std::vector<const StmtNode*> path_to(const StmtNode* node) const;
  // Whether `block` lies under `scope`, at any depth (false for the block itself).
  bool encloses(const BlockNode* scope, const BlockNode* block) const;
  // The statement of `scope`'s body holding `block`, which `scope` encloses.
  size_t statement_in(const BlockNode* scope, const BlockNode* block) const;

 private:
  class Builder;
  // Lookups are sorted vectors (one walk fills them, a sort orders them): a function has a
  // few hundred statements, and a tree is built per function version.
  template <typename Key>
  using Index = std::vector<std::pair<Key, size_t>>;

  std::vector<BlockInfo> blocks_;
  std::vector<LoopInfo> loops_;
  std::vector<const ForNode*> loop_pool_;  // what the infos' loop spans view
  Index<const BlockNode*> block_index_;
  Index<std::string_view> by_name_;
  Index<const VarNode*> by_loop_var_;
  Index<const StmtNode*> parent_index_;  // statement -> its parent's place in parents_
  std::vector<const StmtNode*> parents_;
  const StmtNode* root_ = nullptr;  // the function body
  bool names_unique_ = true;
};

}  // namespace dragon::ir
