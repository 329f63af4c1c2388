// How a scheduled function spreads the terms of its reductions: per block with reduce
// iteration variables, how many terms there are, how many one thread sums serially (the
// loops above the block that feed a reduce variable and are not bound to threadIdx), and
// whether threads share them. For the tests that no long sum runs in one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dragon/ir/functor.h"
#include "dragon/ir/op.h"

namespace dragon::search::testing {

struct ReductionUse {
  std::string block;
  bool initialized = false;    // has an init (not decomposed into an init block)
  int64_t terms = 1;           // the reduce domains' product
  int64_t per_thread = 1;      // terms one thread sums serially
  bool across_threads = false;
  bool float_output = false;
};

inline std::vector<ReductionUse> reductions_of(const ir::PrimFunc& func) {
  struct Scan : ir::StmtVisitor {
    std::vector<const ir::ForNode*> loops;
    std::vector<ReductionUse> found;
    using ir::StmtVisitor::visit_;
    void visit_(const ir::ForNode* op) override {
      loops.push_back(op);
      ir::StmtVisitor::visit_(op);
      loops.pop_back();
    }
    static bool feeds_reduce(const ir::ForNode* loop, const ir::BlockRealizeNode* realize) {
      for (size_t i = 0; i < realize->iter_values.size(); ++i) {
        if (realize->block->iter_vars[i].kind != ir::IterKind::kReduce) continue;
        struct Uses : ir::ExprVisitor {
          const ir::VarNode* var;
          bool found = false;
          using ir::ExprVisitor::visit_;
          void visit_(const ir::VarNode* op) override { found = found || op == var; }
        } uses;
        uses.var = loop->loop_var.get();
        uses.visit(realize->iter_values[i]);
        if (uses.found) return true;
      }
      return false;
    }
    void visit_(const ir::BlockRealizeNode* op) override {
      const ir::BlockNode* b = op->block.get();
      bool reduces = false;
      for (const ir::IterVar& iv : b->iter_vars) reduces = reduces || iv.kind == ir::IterKind::kReduce;
      if (reduces) {
        ReductionUse use;
        use.block = b->name;
        use.initialized = b->init.defined();
        for (const ir::IterVar& iv : b->iter_vars) {
          if (iv.kind == ir::IterKind::kReduce) use.terms *= ir::as_const_int(iv.dom.extent).value_or(1);
        }
        for (const ir::ForNode* l : loops) {
          if (!feeds_reduce(l, op)) continue;
          if (l->for_kind == ir::ForKind::kThreadBinding && l->thread_tag.starts_with("threadIdx.")) {
            use.across_threads = true;
          } else {
            use.per_thread *= ir::as_const_int(l->extent).value_or(1);
          }
        }
        use.float_output = !b->writes.empty() && b->writes[0].buffer->dtype.is_float();
        found.push_back(use);
      }
      std::vector<const ir::ForNode*> saved = std::move(loops);
      loops.clear();
      ir::StmtVisitor::visit_(op);
      loops = std::move(saved);
    }
  } scan;
  scan.visit(func->body);
  return scan.found;
}

// The reductions that still carry their init: one per sum, before decompose_reduction.
inline std::vector<ReductionUse> initialized_reductions_of(const ir::PrimFunc& func) {
  std::vector<ReductionUse> out;
  for (ReductionUse& use : reductions_of(func)) {
    if (use.initialized) out.push_back(std::move(use));
  }
  return out;
}

// The most terms one thread of `func` sums serially in any reduction.
inline int64_t longest_serial_sum(const ir::PrimFunc& func) {
  int64_t longest = 0;
  for (const ReductionUse& use : reductions_of(func)) longest = std::max(longest, use.per_thread);
  return longest;
}

}  // namespace dragon::search::testing
