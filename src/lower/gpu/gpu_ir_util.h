// Helpers the GPU passes share (private to src/lower/gpu/): thread tags, storage scopes,
// variable uses, and finding the kernels of a function. Not a pass.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "dragon/ir/function.h"

namespace dragon::lower::gpu {

bool is_block_tag(std::string_view tag);    // blockIdx.*
bool is_thread_tag(std::string_view tag);   // threadIdx.*
bool is_vthread_tag(std::string_view tag);  // vthread.*
// shared and shared.dyn: one copy per thread block.
bool is_shared_scope(std::string_view scope);
// local, warp and tensor-core fragments: one copy per thread.
bool is_per_thread_scope(std::string_view scope);

// A For bound to a tag matching `pred`, or nullptr.
const ir::ForNode* as_bound_loop(const ir::Stmt& s, bool (*pred)(std::string_view));

// Whether `e` / `s` mentions a variable for which `pred` holds (bounds, indices, values).
bool uses_var(const ir::Expr& e, const std::function<bool(const ir::VarNode*)>& pred);
bool uses_var(const ir::Stmt& s, const std::function<bool(const ir::VarNode*)>& pred);

// Whether a loop bound to blockIdx.* or threadIdx.* lies in `s`.
bool contains_launch_loop(const ir::Stmt& s);

// The kernels of a function: the statements that hold launch loops, found by looking
// through the root block, sequences and allocations at the top of the body (in program
// order). Statements without launch loops found there go to `unbound` when given.
std::vector<ir::Stmt> find_kernels(const ir::Stmt& body, std::vector<ir::Stmt>* unbound = nullptr);

// The statements a kernel synchronizes with: __syncthreads(), cp.async.commit_group, and
// cp.async.wait_group(in_flight) (wait until at most that many groups are in flight).
ir::Stmt sync_threads();
ir::Stmt async_commit_group();
ir::Stmt async_wait_group(int64_t in_flight);

// A kernel's launch nest (the loops bound to blockIdx.* and threadIdx.* at its top, outermost
// first) and what lies under it; `with_launch` puts a new body back under the same loops.
struct LaunchNest {
  std::vector<const ir::ForNode*> loops;
  ir::Stmt body;
  ir::Stmt with_launch(ir::Stmt new_body) const;
};
LaunchNest peel_launch_nest(const ir::Stmt& kernel);

// Rebuilds the top of a function's body, sequences and global allocations (whose names it
// adds to `global_names`: a name a kernel's new buffer must not take), with each statement
// that holds a launch loop replaced by `rewrite_kernel`'s result, for the passes that work
// kernel by kernel. A statement left the same keeps its node.
ir::Stmt rewrite_each_kernel(const ir::Stmt& top, std::set<std::string>& global_names,
                             const std::function<ir::Stmt(const ir::Stmt&)>& rewrite_kernel);

}  // namespace dragon::lower::gpu
