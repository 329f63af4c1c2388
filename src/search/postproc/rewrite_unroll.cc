// RewriteUnroll (rewrite_unroll.h). Reading the IR finds the annotated blocks and the loop
// nests under them; the Schedule makes and records every change.
#include "dragon/search/rewrite_unroll.h"

#include <set>
#include <string>
#include <variant>
#include <vector>

#include "dragon/ir/functor.h"

namespace dragon::search {
namespace {

using schedule::BlockRV;
using schedule::LoopRV;

constexpr const char* kUnrollExplicit = "meta_schedule.unroll_explicit";
constexpr const char* kUnrollImplicit = "meta_schedule.unroll_implicit";

struct UnrollRequest {
  std::string block;
  std::string key;
  int64_t max_step = 0;
  size_t enclosing_loops = 0;  // loops above the block: get_loops of a child lists them first
};

// Annotated blocks in program order, by name (names stay valid across the rewrites).
std::vector<UnrollRequest> unroll_requests(const ir::PrimFunc& func) {
  struct Finder : ir::StmtVisitor {
    std::vector<UnrollRequest> found;
    size_t depth = 0;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      ++depth;
      ir::StmtVisitor::visit_(op);
      --depth;
    }
    void visit_(const ir::BlockRealizeNode* op) override {
      for (const char* key : {kUnrollExplicit, kUnrollImplicit}) {
        auto it = op->block->annotations.find(key);
        if (it == op->block->annotations.end()) continue;
        const auto* value = std::get_if<int64_t>(&it->second);
        found.push_back({op->block->name, key, value != nullptr ? *value : 0, depth});
      }
      ir::StmtVisitor::visit_(op);
    }
  } finder;
  finder.visit(func->body);
  return finder.found;
}

}  // namespace

int rewrite_unroll(schedule::Schedule& sch) {
  int annotated = 0;
  for (const UnrollRequest& request : unroll_requests(sch.func())) {
    BlockRV block = sch.get_block(request.block);
    if (request.max_step > 0) {
      // Find every nest's outermost loop first: annotating a loop rebuilds it, so nests
      // computed at one loop are told apart by node before any changes.
      std::vector<LoopRV> outermost;
      std::set<const ir::ForNode*> seen;
      for (BlockRV child : sch.get_child_blocks(block)) {
        std::vector<LoopRV> loops = sch.get_loops(child);
        // The loops above `block` come first; its nest starts below them.
        if (loops.size() <= request.enclosing_loops) continue;  // a child with no loop of its own
        LoopRV loop = loops[request.enclosing_loops];
        if (seen.insert(sch.get(loop)).second) outermost.push_back(loop);
      }
      for (LoopRV loop : outermost) {
        sch.annotate(loop, "pragma_auto_unroll_max_step", request.max_step);
        sch.annotate(loop, "pragma_unroll_explicit", int64_t{request.key == kUnrollExplicit ? 1 : 0});
        ++annotated;
      }
    }
    sch.unannotate(block, request.key);
  }
  return annotated;
}

}  // namespace dragon::search
