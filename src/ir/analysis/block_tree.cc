// BlockTree (block_tree.h): one depth-first walk in the order schedule lookups use (a
// block's init before its body), recording blocks, loops and parents; then the lookups
// sorted. Where a node is met twice, its first occurrence counts, as a first-match
// search would find it.
#include "dragon/ir/block_tree.h"

#include <algorithm>

namespace dragon::ir {

namespace {

// Sorts an index by key, keeping for each key its first entry (the entries were recorded
// in program order, so their positions increase: ordering equal keys by position is what a
// stable sort would give, without its buffer; a tree is built at every schedule commit).
template <typename Key>
void sort_first_wins(std::vector<std::pair<Key, size_t>>& index) {
  std::sort(index.begin(), index.end());
  index.erase(std::unique(index.begin(), index.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
              index.end());
}

template <typename Key>
const size_t* lookup(const std::vector<std::pair<Key, size_t>>& index, const Key& key) {
  auto it = std::lower_bound(index.begin(), index.end(), key, [](const auto& e, const Key& k) { return e.first < k; });
  return it != index.end() && it->first == key ? &it->second : nullptr;
}

}  // namespace

class BlockTree::Builder {
 public:
  explicit Builder(BlockTree& tree) : tree_(tree) {}

  // In program order, so that a statement held twice keeps its first parent.
  void add_parent(const StmtNode* node, const StmtNode* parent) {
    tree_.parent_index_.emplace_back(node, tree_.parents_.size());
    tree_.parents_.push_back(parent);
  }

  void walk(const StmtNode* node, const StmtNode* parent) {
    // Stores and evaluations hold no statement: never looked up.
    if (node->kind == NodeKind::BufferStore || node->kind == NodeKind::Evaluate) return;
    if (parent != nullptr) add_parent(node, parent);
    switch (node->kind) {
      case NodeKind::For: {
        const auto* loop = static_cast<const ForNode*>(node);
        LoopInfo info;
        info.loop = loop;
        info.scope = scopes_.empty() ? nullptr : tree_.blocks_[scopes_.back()].block;
        tree_.by_loop_var_.emplace_back(loop->loop_var.get(), tree_.loops_.size());
        loop_ranges_.emplace_back(pool_range(scope_start()));
        tree_.loops_.push_back(info);
        loops_.push_back(loop);
        walk(loop->body.get(), node);
        loops_.pop_back();
        break;
      }
      case NodeKind::BlockRealize: walk(static_cast<const BlockRealizeNode*>(node)->block.get(), node); break;
      case NodeKind::Block: visit_block(static_cast<const BlockNode*>(node), parent); break;
      case NodeKind::SeqStmt:
        for (const Stmt& s : static_cast<const SeqStmtNode*>(node)->seq) walk(s.get(), node);
        break;
      case NodeKind::IfThenElse: {
        const auto* branch = static_cast<const IfThenElseNode*>(node);
        walk(branch->then_case.get(), node);
        if (branch->else_case.defined()) walk(branch->else_case.get(), node);
        break;
      }
      case NodeKind::Allocate: walk(static_cast<const AllocateNode*>(node)->body.get(), node); break;
      default: break;
    }
  }

  // The loop spans, once the pool holds every loop list.
  void finish() {
    for (size_t i = 0; i < tree_.blocks_.size(); ++i) tree_.blocks_[i].loops = view(block_ranges_[i]);
    for (size_t i = 0; i < tree_.loops_.size(); ++i) tree_.loops_[i].scope_loops = view(loop_ranges_[i]);
  }

 private:
  size_t scope_start() const { return starts_.empty() ? 0 : starts_.back(); }

  // Appends loops_[from, end) to the pool; returns where it went.
  std::pair<size_t, size_t> pool_range(size_t from) {
    const size_t at = tree_.loop_pool_.size();
    tree_.loop_pool_.insert(tree_.loop_pool_.end(), loops_.begin() + static_cast<std::ptrdiff_t>(from), loops_.end());
    return {at, loops_.size() - from};
  }
  std::span<const ForNode* const> view(std::pair<size_t, size_t> range) const {
    return std::span<const ForNode* const>(tree_.loop_pool_).subspan(range.first, range.second);
  }

  void visit_block(const BlockNode* block, const StmtNode* parent) {
    BlockInfo info;
    info.block = block;
    if (parent != nullptr && parent->kind == NodeKind::BlockRealize) {
      info.realize = static_cast<const BlockRealizeNode*>(parent);
    }
    block_ranges_.emplace_back(pool_range(0));
    info.scope_loop_count = loops_.size() - scope_start();
    info.in_init = init_depth_ > 0;
    if (!scopes_.empty()) {
      info.scope = tree_.blocks_[scopes_.back()].block;
      info.statement = statements_.back();
      info.in_scope_init = in_scope_init_.back();
      tree_.blocks_[scopes_.back()].leaf = false;
    }
    const size_t index = tree_.blocks_.size();
    tree_.block_index_.emplace_back(block, index);
    tree_.by_name_.emplace_back(block->name, index);
    tree_.blocks_.push_back(info);
    scopes_.push_back(index);
    starts_.push_back(loops_.size());
    statements_.push_back(0);
    in_scope_init_.push_back(true);
    if (block->init.defined()) {
      ++init_depth_;
      walk(block->init.get(), block);
      --init_depth_;
    }
    in_scope_init_.back() = false;
    if (const auto* seq = block->body.as<SeqStmtNode>()) {
      add_parent(seq, block);
      for (size_t i = 0; i < seq->seq.size(); ++i) {
        statements_.back() = i;
        walk(seq->seq[i].get(), seq);
      }
    } else {
      walk(block->body.get(), block);
    }
    in_scope_init_.pop_back();
    statements_.pop_back();
    starts_.pop_back();
    scopes_.pop_back();
  }

  BlockTree& tree_;
  std::vector<const ForNode*> loops_;  // the loops above the node being visited
  std::vector<size_t> scopes_;         // the blocks above it (indexes into blocks_)
  std::vector<size_t> starts_;         // per such block, loops_.size() at it
  std::vector<size_t> statements_;     // per such block, the statement of its body being visited
  std::vector<bool> in_scope_init_;    // per such block, whether its init is being visited
  int init_depth_ = 0;
  // Per block (loop), where its loop list lies in the pool: (first, count).
  std::vector<std::pair<size_t, size_t>> block_ranges_, loop_ranges_;
};

BlockTree::BlockTree(const PrimFunc& func) {
  if (!func.defined() || !func->body.defined()) return;
  root_ = func->body.get();
  Builder builder(*this);
  builder.walk(root_, nullptr);
  builder.finish();
  sort_first_wins(block_index_);
  sort_first_wins(by_loop_var_);
  const size_t names = by_name_.size();
  sort_first_wins(by_name_);
  names_unique_ = by_name_.size() == names;
  sort_first_wins(parent_index_);
}

const BlockTree::BlockInfo* BlockTree::find(const BlockNode* block) const {
  const size_t* i = lookup(block_index_, block);
  return i == nullptr ? nullptr : &blocks_[*i];
}

const BlockTree::LoopInfo* BlockTree::find(const ForNode* loop) const {
  const LoopInfo* info = loop_of(loop->loop_var.get());
  return info != nullptr && info->loop == loop ? info : nullptr;
}

const BlockTree::BlockInfo* BlockTree::named(std::string_view name) const {
  const size_t* i = lookup(by_name_, name);
  return i == nullptr ? nullptr : &blocks_[*i];
}

const BlockTree::LoopInfo* BlockTree::loop_of(const VarNode* loop_var) const {
  const size_t* i = lookup(by_loop_var_, loop_var);
  return i == nullptr ? nullptr : &loops_[*i];
}

const StmtNode* BlockTree::parent(const StmtNode* node) const {
  const size_t* i = lookup(parent_index_, node);
  return i == nullptr ? nullptr : parents_[*i];
}

std::vector<const StmtNode*> BlockTree::path_to(const StmtNode* node) const {
  std::vector<const StmtNode*> path;
  for (const StmtNode* at = node; at != nullptr; at = parent(at)) path.push_back(at);
  if (path.back() != root_) return {};  // not in the function
  std::reverse(path.begin(), path.end());
  return path;
}

bool BlockTree::encloses(const BlockNode* scope, const BlockNode* block) const {
  for (const BlockInfo* info = find(block); info != nullptr && info->scope != nullptr; info = find(info->scope)) {
    if (info->scope == scope) return true;
  }
  return false;
}

size_t BlockTree::statement_in(const BlockNode* scope, const BlockNode* block) const {
  // The ancestor of `block` directly in `scope` (the block itself or a block holding it)
  // sits in the statement recorded for it.
  const BlockInfo* info = find(block);
  while (info != nullptr && info->scope != scope) info = find(info->scope);
  return info == nullptr ? 0 : info->statement;
}

}  // namespace dragon::ir
