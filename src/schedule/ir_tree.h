// Internal: navigation and rewriting of a PrimFunc's statement tree for primitives
// (finding loops and blocks, their ancestors, replacing one subtree, rewriting loop
// variables in block bindings). Not a public API; schedule/ callers only.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dragon/ir/function.h"
#include "dragon/ir/simplify.h"
#include "dragon/ir/substitute.h"

namespace dragon::schedule::detail {

// The statements from the function body down to `target` (both included); empty when
// `target` is not in the function.
std::vector<const ir::StmtNode*> path_to(const ir::PrimFunc& func, const ir::StmtNode* target);
const ir::ForNode* find_loop(const ir::PrimFunc& func, const ir::VarNode* loop_var);
// The realization of the block named `name`, or nullptr.
const ir::BlockRealizeNode* find_block_realize(const ir::PrimFunc& func, std::string_view name);
// The loops between the nearest enclosing block and the end of `path`, outermost first.
std::vector<const ir::ForNode*> loops_above(const std::vector<const ir::StmtNode*>& path);
// The nearest block strictly above the end of `path` (the scope block), or nullptr.
const ir::BlockNode* scope_block(const std::vector<const ir::StmtNode*>& path);
// Realizations under `stmt` that are not inside another block below it, in program order.
std::vector<const ir::BlockRealizeNode*> child_block_realizes(const ir::Stmt& stmt);
// Whether one of `regions` is of `buffer`.
bool has_buffer(const std::vector<ir::BufferRegion>& regions, const ir::BufferNode* buffer);
// An analyzer knowing the ranges of every loop on `path` (above its last element).
ir::Analyzer analyzer_for(const std::vector<const ir::StmtNode*>& path);

// `root` with the statement `old` replaced by `replacement` (ancestors rebuilt).
ir::Stmt replace_stmt(const ir::Stmt& root, const ir::StmtNode* old, const ir::Stmt& replacement);
ir::PrimFunc replace_in_func(const ir::PrimFunc& func, const ir::StmtNode* old, const ir::Stmt& replacement);

// Rewrites loop variables in `body` (loop bounds, block bindings and predicates, down to
// the first block on each path, since blocks never see outer loop variables): each key
// becomes its expression, and the blocks reached are guarded by `extra_predicate` when
// defined. Changed bindings and predicates are simplified with `analyzer` plus the loops
// met on the way down.
ir::Stmt rewrite_loop_vars(const ir::Stmt& body, const std::unordered_map<const ir::VarNode*, ir::Expr>& subst,
                           const ir::Expr& extra_predicate, const ir::Analyzer& analyzer);

// Whether `e` mentions any variable of `vars`.
bool uses_any_var(const ir::Expr& e, const std::vector<const ir::VarNode*>& vars);

// The primitives' name for ir::substitute (ir/substitute.h).
inline ir::Expr substitute_vars(const ir::Expr& e, const ir::VarMap& subst) { return ir::substitute(e, subst); }
inline ir::Stmt substitute_vars(const ir::Stmt& s, const ir::VarMap& subst) { return ir::substitute(s, subst); }

// `s` with every use of a buffer of `subst` (loads, stores, access regions, allocations)
// replaced by its new buffer. (cache_read, cache_write, set_scope)
ir::Stmt replace_buffers(const ir::Stmt& s, const std::unordered_map<const ir::BufferNode*, ir::Buffer>& subst);
// Every block realization of `func` (nested ones too), in program order.
std::vector<const ir::BlockRealizeNode*> all_block_realizes(const ir::PrimFunc& func);
// `base`, or `base_1`, `base_2`, ...: the first name no block and no buffer of `func` has.
std::string fresh_block_name(const ir::PrimFunc& func, const std::string& base);
// Whether every conjunct of `predicate` that mentions a loop of `dropped` holds for all
// values of the other loops when the dropped loops are at their start: a block guarded by
// the remaining conjuncts then runs exactly where the first iteration of the dropped loops
// did (decompose_reduction, rfactor).
bool dropped_guards_hold(const ir::Expr& predicate, const std::vector<const ir::ForNode*>& dropped,
                         const ir::Analyzer& analyzer);
// The conjuncts of `predicate` that mention none of `dropped` (TVM's RemakePredicate: a
// conjunct over discarded reduce loops guards the update only).
ir::Expr kept_conjuncts(const ir::Expr& predicate, const std::vector<const ir::VarNode*>& dropped);

}  // namespace dragon::schedule::detail
